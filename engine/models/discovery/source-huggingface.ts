// The Hugging Face hub cache: models--<org>--<name>/snapshots/<revision>/**.gguf, where each
// file is a link into the repository's blobs/. The snapshot path is what is reported (its
// name says what it is); its size is the blob's. Named <org>/<name>/<file>.
import { promises as fsp } from 'node:fs';
import { join } from 'node:path';
import { cacheHome, type Candidate, type DiscoveryContext, type SourceResult } from './context';
import { withoutGgufExtension } from './gguf-names';
import { findGgufFiles } from './walk';

export function huggingFaceRoot(ctx: DiscoveryContext): string {
  if (ctx.env.HF_HUB_CACHE) return ctx.env.HF_HUB_CACHE;
  if (ctx.env.HF_HOME) return join(ctx.env.HF_HOME, 'hub');
  return join(cacheHome(ctx), 'huggingface', 'hub');
}

export async function huggingFaceModels(ctx: DiscoveryContext): Promise<SourceResult> {
  const root = huggingFaceRoot(ctx);
  const candidates: Candidate[] = [];
  const repos = await fsp.readdir(root, { withFileTypes: true }).catch(() => []);
  for (const repo of repos.sort((a, b) => (a.name < b.name ? -1 : 1))) {
    // A folder, or a link to one (caches get moved to bigger disks and linked back).
    if (!repo.name.startsWith('models--') || !(repo.isDirectory() || repo.isSymbolicLink())) {
      continue;
    }
    const repoName = repo.name.slice('models--'.length).split('--').join('/');
    const snapshots = join(root, repo.name, 'snapshots');
    const revisions = await fsp.readdir(snapshots, { withFileTypes: true }).catch(() => []);
    for (const rev of revisions.sort((a, b) => (a.name < b.name ? -1 : 1))) {
      if (!rev.isDirectory() && !rev.isSymbolicLink()) continue;
      for (const f of await findGgufFiles(join(snapshots, rev.name), 4)) {
        const name = `${repoName}/${withoutGgufExtension(f.relative)}`;
        candidates.push({ source: 'huggingface', name, path: f.path });
      }
    }
  }
  return { candidates, searched: [root] };
}
