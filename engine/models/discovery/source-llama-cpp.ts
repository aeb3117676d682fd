// llama.cpp's download cache (`llama-cli -hf …`): `$LLAMA_CACHE`, else the platform's cache
// folder + llama.cpp, as llama.cpp's fs_get_cache_directory() picks it. Files are named
// <org>_<repo>_<file>.gguf; they are listed by file name.
import { basename, join } from 'node:path';
import { cacheHome, type Candidate, type DiscoveryContext, type SourceResult } from './context';
import { withoutGgufExtension } from './gguf-names';
import { findGgufFiles } from './walk';

export function llamaCppRoot(ctx: DiscoveryContext): string {
  if (ctx.env.LLAMA_CACHE) return ctx.env.LLAMA_CACHE;
  if (ctx.platform === 'darwin') return join(ctx.home, 'Library', 'Caches', 'llama.cpp');
  if (ctx.platform === 'win32' && ctx.env.LOCALAPPDATA) {
    return join(ctx.env.LOCALAPPDATA, 'llama.cpp');
  }
  return join(cacheHome(ctx), 'llama.cpp');
}

export async function llamaCppModels(ctx: DiscoveryContext): Promise<SourceResult> {
  const root = llamaCppRoot(ctx);
  const candidates: Candidate[] = (await findGgufFiles(root, 6)).map((f) => ({
    source: 'llama.cpp',
    name: withoutGgufExtension(basename(f.path)),
    path: f.path,
  }));
  return { candidates, searched: [root] };
}
