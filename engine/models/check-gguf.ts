// Cheap checks before the native loader sees a file, so the common mistakes (wrong path, a
// download that was cut short, a file that is not a GGUF) give a one-line reason the user
// can act on. The native loader still validates everything else.
import { closeSync, openSync, readSync, statSync } from 'node:fs';

export class ModelFileError extends Error {}

export function checkGgufFile(path: string, role: 'model' | 'draft model'): void {
  let size: number;
  try {
    const st = statSync(path);
    if (!st.isFile()) throw new ModelFileError(`${role} is not a file: ${path}`);
    size = st.size;
  } catch (err) {
    if (err instanceof ModelFileError) throw err;
    throw new ModelFileError(`${role} file not found: ${path}`);
  }
  if (size < 24) throw new ModelFileError(`${role} file is truncated (${size} bytes): ${path}`);
  const magic = Buffer.alloc(4);
  const fd = openSync(path, 'r');
  try {
    readSync(fd, magic, 0, 4, 0);
  } finally {
    closeSync(fd);
  }
  if (magic.toString('latin1') !== 'GGUF') {
    throw new ModelFileError(`${role} file is not a GGUF file (bad magic): ${path}`);
  }
}
