// Finds the listable GGUFs under a folder: bounded in depth and in entries read, following
// links to folders once each (a link loop ends), skipping hidden folders (.locks, .git,
// .no_exist). A folder that is missing or unreadable contributes nothing.
import { promises as fsp, type Dirent } from 'node:fs';
import { join, relative } from 'node:path';
import { isListedGguf } from './gguf-names';

export interface FoundFile {
  path: string;
  /** The path below the folder searched, with `/` separators. */
  relative: string;
}

/** Most directory entries one search reads (a folder like `/` must not take minutes). */
const MAX_ENTRIES = 50_000;

export async function findGgufFiles(root: string, maxDepth: number): Promise<FoundFile[]> {
  const found: FoundFile[] = [];
  const visited = new Set<string>();
  let budget = MAX_ENTRIES;

  async function visit(dir: string, depth: number): Promise<void> {
    const real = await fsp.realpath(dir).catch(() => undefined);
    if (!real || visited.has(real)) return;
    visited.add(real);
    let entries: Dirent[];
    try {
      entries = await fsp.readdir(dir, { withFileTypes: true });
    } catch {
      return;
    }
    entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    for (const e of entries) {
      if (--budget < 0) return;
      if (e.name.startsWith('.')) continue;
      const path = join(dir, e.name);
      let isDir = e.isDirectory();
      let isFile = e.isFile();
      if (e.isSymbolicLink()) {
        const st = await fsp.stat(path).catch(() => undefined);
        // A broken link named like a model is listed, so the user learns why it fails.
        isDir = st?.isDirectory() ?? false;
        isFile = st ? st.isFile() : true;
      }
      if (isDir && depth < maxDepth) await visit(path, depth + 1);
      else if (isFile && isListedGguf(e.name)) {
        found.push({ path, relative: relative(root, path).split('\\').join('/') });
      }
    }
  }

  await visit(root, 1);
  return found;
}
