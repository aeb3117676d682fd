// LM Studio's models folder: <publisher>/<repository>/<file>.gguf, named by that path.
import { join } from 'node:path';
import type { Candidate, DiscoveryContext, SourceResult } from './context';
import { withoutGgufExtension } from './gguf-names';
import { findGgufFiles } from './walk';

export function lmStudioRoots(ctx: DiscoveryContext): string[] {
  return [join(ctx.home, '.lmstudio', 'models'), join(ctx.home, '.cache', 'lm-studio', 'models')];
}

export async function lmStudioModels(ctx: DiscoveryContext): Promise<SourceResult> {
  const roots = lmStudioRoots(ctx);
  const candidates: Candidate[] = [];
  for (const root of roots) {
    for (const f of await findGgufFiles(root, 4)) {
      candidates.push({ source: 'lmstudio', name: withoutGgufExtension(f.relative), path: f.path });
    }
  }
  return { candidates, searched: roots };
}
