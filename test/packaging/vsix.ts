// Reads a .vsix (a zip) without unzip: the central directory lists every entry, and each
// entry is stored or deflated. Enough for the package checks; no zip64, no encryption.
import { readFileSync } from 'node:fs';
import { inflateRawSync } from 'node:zlib';

export interface VsixEntry {
  name: string;
  /** Uncompressed size, from the central directory. */
  size: number;
  /** The entry's bytes, inflated. */
  read(): Buffer;
}

const EOCD = 0x06054b50;
const CENTRAL = 0x02014b50;
const LOCAL = 0x04034b50;

export function readVsix(path: string): Map<string, VsixEntry> {
  const zip = readFileSync(path);
  // The end-of-central-directory record is in the last 64 KiB + 22 bytes (comment ≤ 64 KiB).
  let eocd = -1;
  for (let i = zip.length - 22; i >= Math.max(0, zip.length - 65_557); i--) {
    if (zip.readUInt32LE(i) === EOCD) {
      eocd = i;
      break;
    }
  }
  if (eocd < 0) throw new Error(`${path}: not a zip file (no end of central directory)`);
  const count = zip.readUInt16LE(eocd + 10);
  let at = zip.readUInt32LE(eocd + 16);
  const entries = new Map<string, VsixEntry>();
  for (let n = 0; n < count; n++) {
    if (zip.readUInt32LE(at) !== CENTRAL) throw new Error(`${path}: bad central directory`);
    const method = zip.readUInt16LE(at + 10);
    const compressed = zip.readUInt32LE(at + 20);
    const size = zip.readUInt32LE(at + 24);
    const nameLen = zip.readUInt16LE(at + 28);
    const extraLen = zip.readUInt16LE(at + 30);
    const commentLen = zip.readUInt16LE(at + 32);
    const local = zip.readUInt32LE(at + 42);
    const name = zip.toString('utf8', at + 46, at + 46 + nameLen);
    at += 46 + nameLen + extraLen + commentLen;
    entries.set(name, {
      name,
      size,
      read() {
        if (zip.readUInt32LE(local) !== LOCAL) throw new Error(`${path}: bad entry ${name}`);
        const start = local + 30 + zip.readUInt16LE(local + 26) + zip.readUInt16LE(local + 28);
        const data = zip.subarray(start, start + compressed);
        if (method === 0) return Buffer.from(data);
        if (method === 8) return inflateRawSync(data);
        throw new Error(`${path}: ${name} uses compression method ${method}`);
      },
    });
  }
  return entries;
}

/** ELF e_machine of a binary (62: x86-64, 183: aarch64), or undefined if it is not ELF. */
export function elfMachine(bytes: Buffer): number | undefined {
  if (bytes.length < 20 || bytes.toString('latin1', 0, 4) !== '\x7fELF') return undefined;
  const littleEndian = bytes[5] === 1;
  return littleEndian ? bytes.readUInt16LE(18) : bytes.readUInt16BE(18);
}
