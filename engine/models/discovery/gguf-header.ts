// Reads a GGUF file's header — metadata and tensor infos, never the weights — in chunks, so
// a 5 GB model costs only its first few megabytes. Every length and count is checked
// against what is left of the file before anything is read or allocated, so a corrupt or
// truncated file ends in a GgufFormatError (with the reason), never a hang or a huge
// allocation. Opens the file read-only and writes nothing.
import { constants, promises as fsp } from 'node:fs';

/** The file is not a GGUF the reader can make sense of; the message says why. */
export class GgufFormatError extends Error {}

export type GgufScalar = number | boolean | string;

/** Arrays are not kept (a vocabulary is 150k strings): their element type and length are. */
export interface GgufArrayInfo {
  itemType: number;
  length: number;
}

export type GgufMetaValue = GgufScalar | GgufArrayInfo;

export interface GgufTensorInfo {
  name: string;
  /** ne[], innermost (row) dimension first. */
  dims: number[];
  type: number;
  /** Offset relative to the data section. */
  offset: number;
}

export interface GgufHeader {
  version: number;
  metadata: Map<string, GgufMetaValue>;
  tensors: GgufTensorInfo[];
  /** Absolute offset of the data section (the header end, aligned). */
  dataStart: number;
  alignment: number;
  fileSize: number;
}

/**
 * Called for each element of a string array whose key `visitStrings` accepted. `bytes` is a
 * view into the reader's buffer: valid only during the call.
 */
export type StringVisitor = (bytes: Buffer, index: number) => void;

export interface HeaderReadOptions {
  /** A visitor for the string array under `key`, or undefined to skip its elements. */
  visitStrings?: (key: string) => StringVisitor | undefined;
}

const MAGIC = 0x46554747; // "GGUF", little-endian
const CHUNK_BYTES = 1 << 20;
/** Limits of the native reader (native/src/gguf/gguf_file.cpp). */
const MAX_COUNT = 1 << 24;
const MAX_ARRAY_ELEMENTS = 1 << 28;
/** Scalar strings longer than this (a chat template is a few KB) are skipped, not kept. */
const MAX_KEPT_STRING_BYTES = 1 << 20;
const MAX_NAME_BYTES = 1 << 16;
const MAX_DIMS = 4;

enum ValueType {
  UINT8 = 0,
  INT8 = 1,
  UINT16 = 2,
  INT16 = 3,
  UINT32 = 4,
  INT32 = 5,
  FLOAT32 = 6,
  BOOL = 7,
  STRING = 8,
  ARRAY = 9,
  UINT64 = 10,
  INT64 = 11,
  FLOAT64 = 12,
}

const FIXED_SIZES: Partial<Record<ValueType, number>> = {
  [ValueType.UINT8]: 1,
  [ValueType.INT8]: 1,
  [ValueType.BOOL]: 1,
  [ValueType.UINT16]: 2,
  [ValueType.INT16]: 2,
  [ValueType.UINT32]: 4,
  [ValueType.INT32]: 4,
  [ValueType.FLOAT32]: 4,
  [ValueType.UINT64]: 8,
  [ValueType.INT64]: 8,
  [ValueType.FLOAT64]: 8,
};

/** A forward-only little-endian reader over a file, holding one chunk at a time. */
class ChunkedCursor {
  private buf = Buffer.alloc(0);
  private bufStart = 0;
  /** Absolute file offset of the next byte. */
  pos = 0;

  constructor(
    private readonly file: fsp.FileHandle,
    readonly size: number,
  ) {}

  get remaining(): number {
    return this.size - this.pos;
  }

  /** Whether the next `n` bytes are in the buffer already (no await needed). */
  has(n: number): boolean {
    return this.pos >= this.bufStart && this.pos - this.bufStart + n <= this.buf.length;
  }

  /** Makes the next `n` bytes readable; a file that ends first is truncated. */
  async need(n: number, what: string): Promise<void> {
    if (this.has(n)) return;
    if (n > this.remaining) throw truncated(what, this.pos, this.size);
    const length = Math.min(Math.max(n, CHUNK_BYTES), this.remaining);
    const next = Buffer.allocUnsafe(length);
    let got = 0;
    while (got < length) {
      const { bytesRead } = await this.file.read(next, got, length - got, this.pos + got);
      // The file shrank under us: as truncated as a short download.
      if (bytesRead === 0) throw truncated(what, this.pos + got, this.size);
      got += bytesRead;
    }
    this.buf = next;
    this.bufStart = this.pos;
  }

  skip(n: number, what: string): void {
    if (n > this.remaining) throw truncated(what, this.pos, this.size);
    this.pos += n;
  }

  // The readers below assume need() made their bytes readable.
  private at(n: number): number {
    const at = this.pos - this.bufStart;
    this.pos += n;
    return at;
  }
  u8(): number {
    return this.buf.readUInt8(this.at(1));
  }
  i8(): number {
    return this.buf.readInt8(this.at(1));
  }
  u16(): number {
    return this.buf.readUInt16LE(this.at(2));
  }
  i16(): number {
    return this.buf.readInt16LE(this.at(2));
  }
  u32(): number {
    return this.buf.readUInt32LE(this.at(4));
  }
  i32(): number {
    return this.buf.readInt32LE(this.at(4));
  }
  f32(): number {
    return this.buf.readFloatLE(this.at(4));
  }
  f64(): number {
    return this.buf.readDoubleLE(this.at(8));
  }
  /** u64 as a number; beyond 2^53 it is rounded, which no length or count can reach here. */
  u64(): number {
    return Number(this.buf.readBigUInt64LE(this.at(8)));
  }
  i64(): number {
    return Number(this.buf.readBigInt64LE(this.at(8)));
  }
  bytes(n: number): Buffer {
    const at = this.at(n);
    return this.buf.subarray(at, at + n);
  }
}

function truncated(what: string, offset: number, size: number): GgufFormatError {
  return new GgufFormatError(
    `truncated: ${what} runs past the end of the file (offset ${offset}, file size ${size})`,
  );
}

/** Reads the header of the GGUF at `path`. Throws GgufFormatError or the fs error. */
export async function readGgufHeader(
  path: string,
  options: HeaderReadOptions = {},
): Promise<GgufHeader> {
  // O_NONBLOCK: a FIFO named *.gguf must not block the open (callers also stat first).
  const file = await fsp.open(path, constants.O_RDONLY | constants.O_NONBLOCK);
  try {
    const st = await file.stat();
    if (!st.isFile()) throw new GgufFormatError('not a regular file');
    return await parseHeader(new ChunkedCursor(file, st.size), options);
  } finally {
    await file.close();
  }
}

async function parseHeader(c: ChunkedCursor, options: HeaderReadOptions): Promise<GgufHeader> {
  if (c.size < 4) throw new GgufFormatError(`not a GGUF file (${c.size} bytes)`);
  await c.need(4, 'the magic');
  if (c.u32() !== MAGIC) throw new GgufFormatError('not a GGUF file (bad magic)');
  await c.need(20, 'the file header');
  const version = c.u32();
  if (version !== 2 && version !== 3) {
    throw new GgufFormatError(`unsupported GGUF version ${version} (supported: 2, 3)`);
  }
  const nTensors = c.u64();
  const nKv = c.u64();
  // Each key/value takes at least 12 bytes and each tensor info 24: counts that cannot fit
  // in the file are corrupt, and are refused before any loop runs.
  checkCount(c, nKv, 12, 'metadata entries');
  checkCount(c, nTensors, 24, 'tensor infos');

  const metadata = new Map<string, GgufMetaValue>();
  for (let i = 0; i < nKv; i++) {
    const key = await readName(c, `metadata key ${i}`);
    await c.need(4, `the type of '${key}'`);
    const type = c.u32();
    metadata.set(key, await readValue(c, key, type, options));
  }

  const tensors: GgufTensorInfo[] = [];
  for (let i = 0; i < nTensors; i++) tensors.push(await readTensorInfo(c, i));

  const alignment = metadata.get('general.alignment') ?? 32;
  if (typeof alignment !== 'number' || alignment <= 0 || (alignment & (alignment - 1)) !== 0) {
    throw new GgufFormatError(`corrupt header: general.alignment ${String(alignment)}`);
  }
  const dataStart = Math.ceil(c.pos / alignment) * alignment;
  return { version, metadata, tensors, dataStart, alignment, fileSize: c.size };
}

function checkCount(c: ChunkedCursor, n: number, leastBytes: number, what: string): void {
  if (n > MAX_COUNT) throw new GgufFormatError(`corrupt header: implausible count of ${n} ${what}`);
  if (n * leastBytes > c.remaining) {
    throw new GgufFormatError(
      `truncated or corrupt: ${n} ${what} cannot fit in the ${c.remaining} bytes left`,
    );
  }
}

async function readName(c: ChunkedCursor, what: string): Promise<string> {
  await c.need(8, what);
  const n = c.u64();
  if (n > MAX_NAME_BYTES) throw new GgufFormatError(`corrupt header: ${what} is ${n} bytes long`);
  await c.need(n, what);
  return c.bytes(n).toString('utf8');
}

async function readValue(
  c: ChunkedCursor,
  key: string,
  type: number,
  options: HeaderReadOptions,
): Promise<GgufMetaValue> {
  const what = `metadata '${key}'`;
  if (type === ValueType.ARRAY) return readArray(c, key, options);
  if (type === ValueType.STRING) {
    await c.need(8, what);
    const n = c.u64();
    if (n > MAX_KEPT_STRING_BYTES) {
      c.skip(n, what);
      return '';
    }
    await c.need(n, what);
    return c.bytes(n).toString('utf8');
  }
  const size = FIXED_SIZES[type as ValueType];
  if (size === undefined) throw new GgufFormatError(`corrupt header: ${what} has type ${type}`);
  await c.need(size, what);
  return readFixed(c, type);
}

function readFixed(c: ChunkedCursor, type: ValueType): GgufScalar {
  switch (type) {
    case ValueType.UINT8:
      return c.u8();
    case ValueType.INT8:
      return c.i8();
    case ValueType.BOOL:
      return c.u8() !== 0;
    case ValueType.UINT16:
      return c.u16();
    case ValueType.INT16:
      return c.i16();
    case ValueType.UINT32:
      return c.u32();
    case ValueType.INT32:
      return c.i32();
    case ValueType.FLOAT32:
      return c.f32();
    case ValueType.UINT64:
      return c.u64();
    case ValueType.INT64:
      return c.i64();
    default:
      return c.f64();
  }
}

async function readArray(
  c: ChunkedCursor,
  key: string,
  options: HeaderReadOptions,
): Promise<GgufArrayInfo> {
  const what = `metadata array '${key}'`;
  await c.need(12, what);
  const itemType = c.u32();
  const length = c.u64();
  if (length > MAX_ARRAY_ELEMENTS) {
    throw new GgufFormatError(`corrupt header: ${what} has ${length} elements`);
  }
  const size = FIXED_SIZES[itemType as ValueType];
  if (size !== undefined) {
    c.skip(length * size, what);
    return { itemType, length };
  }
  // The native reader refuses nested arrays too.
  if (itemType !== ValueType.STRING) {
    throw new GgufFormatError(`corrupt header: ${what} has element type ${itemType}`);
  }
  if (length * 8 > c.remaining) throw truncated(what, c.pos, c.size);
  const visit = options.visitStrings?.(key);
  for (let i = 0; i < length; i++) {
    // Most elements are in the buffer already: await only to refill it.
    if (!c.has(8)) await c.need(8, what);
    const n = c.u64();
    if (!visit) {
      c.skip(n, what);
      continue;
    }
    if (!c.has(n)) await c.need(n, what);
    visit(c.bytes(n), i);
  }
  return { itemType, length };
}

async function readTensorInfo(c: ChunkedCursor, index: number): Promise<GgufTensorInfo> {
  const name = await readName(c, `the name of tensor ${index}`);
  const what = `tensor '${name}'`;
  await c.need(4, what);
  const nDims = c.u32();
  if (nDims < 1 || nDims > MAX_DIMS) {
    throw new GgufFormatError(`corrupt header: ${what} has ${nDims} dimensions`);
  }
  await c.need(nDims * 8 + 12, what);
  const dims: number[] = [];
  for (let d = 0; d < nDims; d++) {
    const n = c.u64();
    if (!Number.isSafeInteger(n)) throw new GgufFormatError(`corrupt header: ${what} shape`);
    dims.push(n);
  }
  const type = c.u32();
  const offset = c.u64();
  return { name, dims, type, offset };
}
