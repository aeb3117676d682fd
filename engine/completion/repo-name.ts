// The repository name repository-level FIM templates see: the folder that holds `.git`
// above the file, else the file's folder. Derived from the file alone, so the server and
// `leapfrog complete` build the same prompt for the same file.
import { existsSync } from 'node:fs';
import { basename, dirname } from 'node:path';

const cache = new Map<string, string>();

export function repoNameFor(filePath: string): string {
  const start = dirname(filePath);
  const hit = cache.get(start);
  if (hit !== undefined) return hit;
  let dir = start;
  let name = basename(start) || 'workspace';
  for (let i = 0; i < 32; i++) {
    if (existsSync(`${dir}/.git`)) {
      name = basename(dir) || name;
      break;
    }
    const up = dirname(dir);
    if (up === dir) break;
    dir = up;
  }
  cache.set(start, name);
  return name;
}
