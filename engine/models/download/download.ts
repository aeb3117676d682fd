// Downloads one GGUF into a folder, when the user asks for it (nothing here runs on its
// own). The bytes go to `<name>.part`; a `.part` left by an interrupted attempt is resumed
// with a Range request (206), or started over when the server ignores the range (200).
// The whole file is checked against the sha256 the server announces (Hugging Face's
// `x-linked-etag`) and the one the user gave, and renamed into place only when whole and
// checked; an existing file is never replaced unless that was asked for. A cancel or a
// cut connection keeps the `.part`; a wrong sha256 or a file that is no GGUF removes it.
import type { Hash } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { mkdir, rename, rm } from 'node:fs/promises';
import { isAbsolute, join } from 'node:path';
import { once } from 'node:events';
import { DownloadError } from './errors';
import { checkSha256, checkUrl, downloadFileName } from './source';
import { openDownload, reason, statusError, type OpenedDownload } from './request';
import {
  closeStream,
  describeStart,
  exists,
  firstBytes,
  GGUF_MAGIC,
  hashPrefix,
  sizeOf,
} from './part-file';

export interface DownloadRequest {
  url: string;
  /** Absolute folder the file goes into (created when missing). */
  folder: string;
  /** Default: the URL's last path segment. */
  fileName?: string;
  /** Expected sha256, hex. */
  sha256?: string;
  /** Replace an existing file of the same name. */
  overwrite?: boolean;
  signal?: AbortSignal;
  onProgress?: (received: number, total: number | null) => void;
  /** Longest wait for the next bytes before the connection counts as cut. */
  stallMs?: number;
  /** Least time between two progress reports (the first and last always go out). */
  progressIntervalMs?: number;
  /** Hugging Face token for gated repositories (sent to huggingface.co only). */
  hfToken?: string;
}

export interface DownloadOutcome {
  path: string;
  bytes: number;
  sha256: string;
  verified: 'server' | 'user' | 'both' | 'none';
  resumedFrom: number;
}

const DEFAULT_STALL_MS = 60_000;
const DEFAULT_PROGRESS_MS = 250;

/** `.part` files being written by this process: a second download of one is refused. */
const inFlight = new Set<string>();

export async function downloadModel(req: DownloadRequest): Promise<DownloadOutcome> {
  const url = checkUrl(req.url);
  const name = downloadFileName(url, req.fileName);
  const userSha = checkSha256(req.sha256);
  if (!isAbsolute(req.folder)) {
    throw new DownloadError(`the model folder must be an absolute path: ${req.folder}`, 'bad-input');
  }
  const dest = join(req.folder, name);
  const part = `${dest}.part`;
  // Claimed before the first await: checked after it, two calls that both awaited the
  // existence check could resume in either order, and the first caller was the one refused.
  if (inFlight.has(part)) throw new DownloadError(`${name} is already downloading`, 'busy', dest);
  inFlight.add(part);
  try {
    if (!req.overwrite && (await exists(dest))) {
      throw new DownloadError(`${dest} already exists`, 'exists', dest);
    }
    try {
      await mkdir(req.folder, { recursive: true });
    } catch (err) {
      throw new DownloadError(`cannot create ${req.folder}: ${reason(err)}`, 'disk', req.folder);
    }
    return await new Transfer(req, url.href, dest, part, userSha).run();
  } finally {
    inFlight.delete(part);
  }
}

/** One attempt at one file: request, stream to the `.part`, check, rename. */
class Transfer {
  private readonly controller = new AbortController();
  private stalled = false;
  private timer: ReturnType<typeof setTimeout> | undefined;
  private received = 0;
  private total: number | null = null;
  private lastReport = 0;

  constructor(
    private readonly req: DownloadRequest,
    private readonly url: string,
    private readonly dest: string,
    private readonly part: string,
    private readonly userSha: string | undefined,
  ) {}

  async run(): Promise<DownloadOutcome> {
    const cancel = () => this.controller.abort();
    if (this.req.signal?.aborted) cancel();
    this.req.signal?.addEventListener('abort', cancel);
    try {
      return await this.transfer();
    } catch (err) {
      throw this.explain(err);
    } finally {
      clearTimeout(this.timer);
      this.req.signal?.removeEventListener('abort', cancel);
    }
  }

  private async transfer(): Promise<DownloadOutcome> {
    const resumedFrom = await sizeOf(this.part);
    // Hashed before the request, not while its connection waits (a part of gigabytes takes
    // a while to read, and would look like a stalled connection).
    const prefix = await hashPrefix(this.part, resumedFrom);
    const { opened, offset, complete } = await this.open(resumedFrom);
    const serverSha = opened?.announcedSha256;
    if (serverSha && this.userSha && serverSha !== this.userSha) {
      await opened?.response.body?.cancel().catch(() => undefined);
      throw new DownloadError(
        `the server announces sha256 ${serverSha}, not the ${this.userSha} you gave; ` +
          'nothing was downloaded',
        'checksum',
      );
    }
    const hash = offset === resumedFrom ? prefix : await hashPrefix(this.part, offset);
    this.received = offset;
    if (!complete && opened) await this.receive(opened.response, offset, hash);
    this.report(true);

    const head = await firstBytes(this.part, 16);
    if (head.subarray(0, 4).toString('latin1') !== GGUF_MAGIC) {
      await rm(this.part, { force: true });
      throw this.notGguf(head);
    }
    const sha256 = hash.digest('hex');
    for (const [expected, from] of [
      [serverSha, 'the server announced'],
      [this.userSha, 'you gave'],
    ] as const) {
      if (expected && expected !== sha256) {
        await rm(this.part, { force: true });
        throw new DownloadError(
          `sha256 mismatch: the file has ${sha256}, ${from} ${expected}; ` +
            'the download was removed',
          'checksum',
          this.dest,
        );
      }
    }
    if (!this.req.overwrite && (await exists(this.dest))) {
      throw new DownloadError(`${this.dest} already exists`, 'exists', this.dest);
    }
    await rename(this.part, this.dest);
    return {
      path: this.dest,
      bytes: this.received,
      sha256,
      verified: serverSha ? (this.userSha ? 'both' : 'server') : this.userSha ? 'user' : 'none',
      resumedFrom: offset > 0 ? offset : 0,
    };
  }

  /**
   * Asks for the bytes after `offset`. A 206 that starts there resumes; a 200 (the server
   * ignores Range) or a 206 elsewhere starts over from 0; a 416 whose total is `offset`
   * means the `.part` is already whole (an earlier attempt ended before the rename).
   */
  private async open(
    offset: number,
  ): Promise<{ opened?: OpenedDownload; offset: number; complete: boolean }> {
    for (let attempt = 0; attempt < 2; attempt++) {
      this.arm();
      const opened = await openDownload(this.url, {
        offset,
        signal: this.controller.signal,
        hfToken: this.req.hfToken,
      });
      const res = opened.response;
      const range = parseContentRange(res.headers.get('content-range'));
      if (res.status === 416 && offset > 0) {
        await res.body?.cancel().catch(() => undefined);
        if (range?.total === offset) {
          this.total = offset;
          return { opened, offset, complete: true };
        }
        offset = 0;
        continue;
      }
      if (res.status === 206) {
        if (range && range.start === offset) {
          this.total = range.total ?? null;
          return { opened, offset, complete: false };
        }
        await res.body?.cancel().catch(() => undefined);
        offset = 0;
        continue;
      }
      if (res.status === 200) {
        this.total = contentLength(res);
        return { opened, offset: 0, complete: false };
      }
      await res.body?.cancel().catch(() => undefined);
      throw statusError(res, opened.finalUrl, this.url);
    }
    throw new DownloadError(`the server's answers to a range request do not add up`, 'http');
  }

  private async receive(
    res: Response,
    offset: number,
    hash: Hash,
  ): Promise<void> {
    if (!res.body) throw new DownloadError('the server sent no body', 'http');
    const out = createWriteStream(this.part, { flags: offset > 0 ? 'a' : 'w' });
    let writeError: Error | undefined;
    out.on('error', (e) => (writeError = e));
    // The first bytes of a fresh download tell at once whether it is a GGUF at all (a
    // sign-in page answered with 200 is not); a resumed one is checked from the file.
    let head: Buffer | undefined = offset === 0 ? Buffer.alloc(0) : undefined;
    this.report(true);
    try {
      for await (const chunk of res.body as AsyncIterable<Uint8Array>) {
        this.arm();
        const buf = Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
        if (head) {
          head = Buffer.concat([head, buf.subarray(0, 16 - head.length)]);
          if (head.length >= 4) {
            if (head.subarray(0, 4).toString('latin1') !== GGUF_MAGIC) throw this.notGguf(head);
            head = undefined;
          }
        }
        hash.update(buf);
        this.received += buf.length;
        if (writeError) throw writeError;
        if (!out.write(buf)) await once(out, 'drain');
        this.report();
      }
      await closeStream(out);
    } catch (err) {
      await closeStream(out).catch(() => undefined);
      if (err instanceof DownloadError && err.kind === 'not-gguf') {
        await rm(this.part, { force: true });
      }
      if (writeError || (err as { syscall?: string }).syscall) {
        throw new DownloadError(
          `cannot write ${this.part}: ${reason(writeError ?? err)}`,
          'disk',
          this.part,
        );
      }
      throw err;
    }
    if (this.total !== null && this.received !== this.total) {
      throw new DownloadError(
        `the server sent ${this.received} of ${this.total} bytes; ` +
          'download again to resume from there',
        'network',
        this.part,
      );
    }
  }

  /** Restarts the stall timer: no bytes for `stallMs` counts as a cut connection. */
  private arm(): void {
    clearTimeout(this.timer);
    this.timer = setTimeout(() => {
      this.stalled = true;
      this.controller.abort();
    }, this.req.stallMs ?? DEFAULT_STALL_MS);
  }

  private report(force = false): void {
    const now = Date.now();
    if (!force && now - this.lastReport < (this.req.progressIntervalMs ?? DEFAULT_PROGRESS_MS))
      return;
    this.lastReport = now;
    this.req.onProgress?.(this.received, this.total);
  }

  private notGguf(head: Buffer): DownloadError {
    return new DownloadError(
      `what ${new URL(this.url).host} sent is not a GGUF file (it starts with ` +
        `${describeStart(head)}); nothing was kept`,
      'not-gguf',
      this.dest,
    );
  }

  /** Turns an abort or a socket error into the DownloadError that says what happened. */
  private explain(err: unknown): DownloadError {
    if (err instanceof DownloadError && err.kind !== 'network') return err;
    const where = `after ${this.received}${this.total !== null ? ` of ${this.total}` : ''} bytes`;
    const kept = this.received > 0 ? `; the partial file is kept to resume` : '';
    if (this.req.signal?.aborted) {
      return new DownloadError(`download cancelled ${where}${kept}`, 'cancelled', this.part);
    }
    if (this.stalled) {
      const s = Math.round((this.req.stallMs ?? DEFAULT_STALL_MS) / 1000);
      return new DownloadError(`no data for ${s} s ${where}${kept}`, 'network', this.part);
    }
    if (err instanceof DownloadError) return err;
    return new DownloadError(
      `the connection was cut ${where} (${reason(err)})${kept}`,
      'network',
      this.part,
    );
  }
}

interface ContentRange {
  start: number;
  end: number;
  /** null for `*` (unknown). */
  total: number | null;
}

// `bytes 100-199/1000`, `bytes <star>/1000` (a 416's) or `bytes 0-9/<star>`.
export function parseContentRange(header: string | null): Partial<ContentRange> | undefined {
  if (!header) return undefined;
  const m = /^bytes\s+(?:(\d+)-(\d+)|\*)\/(\d+|\*)$/i.exec(header.trim());
  if (!m) return undefined;
  return {
    start: m[1] !== undefined ? Number(m[1]) : undefined,
    end: m[2] !== undefined ? Number(m[2]) : undefined,
    total: m[3] === '*' ? null : Number(m[3]),
  };
}

function contentLength(res: Response): number | null {
  if (res.headers.get('content-encoding')) return null;
  const n = Number(res.headers.get('content-length'));
  return Number.isFinite(n) && n >= 0 && res.headers.get('content-length') !== null ? n : null;
}
