// The `.part` file on disk: its size (where a resume starts), the sha256 of what it already
// holds (a resume continues that hash), its first bytes (is it a GGUF?), and closing a
// write stream so that every byte written is on disk before anyone looks.
import { createHash, type Hash } from 'node:crypto';
import { createReadStream, type WriteStream } from 'node:fs';
import { open, stat } from 'node:fs/promises';
import { finished } from 'node:stream/promises';

export const GGUF_MAGIC = 'GGUF';

/** Size of a file, 0 when there is none. */
export async function sizeOf(path: string): Promise<number> {
  try {
    const s = await stat(path);
    return s.isFile() ? s.size : 0;
  } catch {
    return 0;
  }
}

export async function exists(path: string): Promise<boolean> {
  try {
    await stat(path);
    return true;
  } catch {
    return false;
  }
}

/** A sha256 fed with the first `bytes` bytes of `path`. */
export async function hashPrefix(path: string, bytes: number): Promise<Hash> {
  const hash = createHash('sha256');
  if (bytes <= 0) return hash;
  for await (const chunk of createReadStream(path, { start: 0, end: bytes - 1 })) {
    hash.update(chunk as Buffer);
  }
  return hash;
}

/** The first `n` bytes of a file (fewer when it is shorter). */
export async function firstBytes(path: string, n: number): Promise<Buffer> {
  const fh = await open(path, 'r');
  try {
    const buf = Buffer.alloc(n);
    const { bytesRead } = await fh.read(buf, 0, n, 0);
    return buf.subarray(0, bytesRead);
  } finally {
    await fh.close();
  }
}

/** Ends a write stream and waits until its bytes are on disk (rejects on a write error). */
export async function closeStream(out: WriteStream): Promise<void> {
  if (!out.writableEnded) out.end();
  await finished(out);
}

/** How a file's start reads in a message: printable text as is, else as hex. */
export function describeStart(head: Buffer): string {
  const text = head.toString('latin1');
  return /^[\x20-\x7e]+$/.test(text) ? JSON.stringify(text) : `0x${head.toString('hex')}`;
}
