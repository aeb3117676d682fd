// Folders the user added (`--folder`, `leapfrog.modelFolders`): any *.gguf a few levels down,
// named by its path below the folder.
import { resolve } from 'node:path';
import type { Candidate, DiscoveryContext, SourceResult } from './context';
import { withoutGgufExtension } from './gguf-names';
import { findGgufFiles } from './walk';

const MAX_DEPTH = 5;

export function addedFolders(ctx: DiscoveryContext): string[] {
  const expanded = ctx.folders
    .map((f) => f.trim())
    .filter((f) => f !== '')
    .map((f) => resolve(f === '~' ? ctx.home : f.startsWith('~/') ? ctx.home + f.slice(1) : f));
  return [...new Set(expanded)];
}

export async function folderModels(ctx: DiscoveryContext): Promise<SourceResult> {
  const roots = addedFolders(ctx);
  const candidates: Candidate[] = [];
  for (const root of roots) {
    for (const f of await findGgufFiles(root, MAX_DEPTH)) {
      candidates.push({ source: 'folder', name: withoutGgufExtension(f.relative), path: f.path });
    }
  }
  return { candidates, searched: roots };
}
