// Which file a loaded model came from (device, inode, size, modification time), so the
// status can say when it was deleted, truncated or replaced on disk after loading. The
// engine no longer reads the file once loaded (native/src/gguf/detach.cpp), so the loaded
// copy keeps working; the user only needs to know that a reload would load something else.
import { statSync, unwatchFile, watchFile } from 'node:fs';

export interface FileIdentity {
  dev: number;
  ino: number;
  size: number;
  mtimeMs: number;
}

/** The file's identity now, or undefined when it cannot be read. */
export function fileIdentity(path: string): FileIdentity | undefined {
  try {
    const st = statSync(path);
    return { dev: st.dev, ino: st.ino, size: st.size, mtimeMs: st.mtimeMs };
  } catch {
    return undefined;
  }
}

/** What happened to `path` since `loaded` was taken: 'deleted', 'replaced', ...; or undefined. */
export function fileChange(path: string, loaded: FileIdentity): string | undefined {
  const now = fileIdentity(path);
  if (!now) return 'deleted';
  if (now.dev !== loaded.dev || now.ino !== loaded.ino) return 'replaced';
  if (now.size < loaded.size) return `truncated (${loaded.size} → ${now.size} bytes)`;
  if (now.size !== loaded.size || now.mtimeMs !== loaded.mtimeMs) return 'rewritten';
  return undefined;
}

/**
 * Calls `onChange` when any of `paths` changes on disk (polled: it sees deletes, renames
 * and truncations alike), so the status notification goes out without a client asking.
 * Does not keep the process alive. Returns the function that stops watching.
 */
export function watchFiles(paths: string[], onChange: () => void, intervalMs = 2000): () => void {
  const listener = () => onChange();
  for (const p of paths) watchFile(p, { persistent: false, interval: intervalMs }, listener);
  return () => {
    for (const p of paths) unwatchFile(p, listener);
  };
}
