// Cheap checks before the native loader sees a file, so the common mistakes (wrong path, a
// download that was cut short, a file that is not a GGUF) give a one-line reason the user
// can act on; each message starts with the path, as the native loader's do. The native
// loader still validates everything else.
import { closeSync, openSync, readSync, statSync } from 'node:fs';

export class ModelFileError extends Error {}

export function checkGgufFile(path: string, role: 'model' | 'draft model'): void {
  let size: number;
  try {
    const st = statSync(path);
    if (!st.isFile()) throw new ModelFileError(`${path}: ${role} is not a file`);
    size = st.size;
  } catch (err) {
    if (err instanceof ModelFileError) throw err;
    throw new ModelFileError(`${path}: ${role} file not found`);
  }
  if (size < 24) throw new ModelFileError(`${path}: truncated ${role} file (${size} bytes)`);
  const magic = Buffer.alloc(4);
  const fd = openSync(path, 'r');
  try {
    readSync(fd, magic, 0, 4, 0);
  } finally {
    closeSync(fd);
  }
  if (magic.toString('latin1') !== 'GGUF') {
    throw new ModelFileError(`${path}: not a GGUF file (bad magic)`);
  }
}
