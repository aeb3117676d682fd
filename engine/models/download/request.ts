// One GET of the file, following redirects by hand (at most MAX_REDIRECTS): Hugging Face
// answers `resolve/main/<file>` with a redirect to its CDN, and only that first answer
// carries the file's sha256 (`x-linked-etag`) — an automatic redirect would lose it.
// A Hugging Face token (HF_TOKEN) goes to huggingface.co only, never to the CDN or a
// third host a redirect names.
import { DownloadError } from './errors';

const MAX_REDIRECTS = 10;
const REDIRECTS = new Set([301, 302, 303, 307, 308]);

export interface OpenedDownload {
  /** The final answer (not a redirect); its body is unread. */
  response: Response;
  finalUrl: string;
  /** sha256 a hop announced: `x-linked-etag`, else an `etag` that is a sha256. */
  announcedSha256?: string;
}

export interface OpenOptions {
  /** Bytes already on disk: asked for with `Range: bytes=<offset>-` when > 0. */
  offset: number;
  signal: AbortSignal;
  /** Sent as a Bearer token to huggingface.co (gated repositories). */
  hfToken?: string;
}

export async function openDownload(url: string, opts: OpenOptions): Promise<OpenedDownload> {
  let current = url;
  let linked: string | undefined;
  let etag: string | undefined;
  for (let hop = 0; hop <= MAX_REDIRECTS; hop++) {
    const target = new URL(current);
    const headers: Record<string, string> = {
      'user-agent': 'leapfrog-vscode',
      // Bytes as stored: a compressed transfer would not match the length or the sha256.
      'accept-encoding': 'identity',
    };
    if (opts.offset > 0) headers.range = `bytes=${opts.offset}-`;
    if (opts.hfToken && isHuggingFace(target)) headers.authorization = `Bearer ${opts.hfToken}`;
    let res: Response;
    try {
      res = await fetch(current, { headers, redirect: 'manual', signal: opts.signal });
    } catch (err) {
      if (opts.signal.aborted) throw err;
      throw new DownloadError(`cannot reach ${target.host}: ${reason(err)}`, 'network');
    }
    linked ??= shaFrom(res.headers.get('x-linked-etag'));
    etag ??= shaFrom(res.headers.get('etag'));
    if (!REDIRECTS.has(res.status)) {
      return { response: res, finalUrl: current, announcedSha256: linked ?? etag };
    }
    await res.body?.cancel().catch(() => undefined);
    const location = res.headers.get('location');
    if (!location) {
      throw new DownloadError(`${target.host} answered ${res.status} without a Location`, 'http');
    }
    const next = new URL(location, current);
    if (next.protocol !== 'https:' && next.protocol !== 'http:') {
      throw new DownloadError(`refusing a redirect to ${next.protocol} (${next.href})`, 'http');
    }
    if (target.protocol === 'https:' && next.protocol === 'http:') {
      throw new DownloadError(`refusing a redirect from https to http (${next.href})`, 'http');
    }
    current = next.href;
  }
  throw new DownloadError(`more than ${MAX_REDIRECTS} redirects from ${url}`, 'http');
}

function isHuggingFace(url: URL): boolean {
  return url.hostname === 'huggingface.co' || url.hostname.endsWith('.huggingface.co');
}

/** An entity tag that is a sha256 (64 hex digits, quoted or not, weak or not). */
export function shaFrom(header: string | null): string | undefined {
  if (!header) return undefined;
  const value = header
    .trim()
    .replace(/^W\//, '')
    .replace(/^"(.*)"$/, '$1')
    .toLowerCase();
  return /^[0-9a-f]{64}$/.test(value) ? value : undefined;
}

/** The innermost cause of a fetch failure (undici wraps socket errors in "fetch failed"). */
export function reason(err: unknown): string {
  let e = err;
  for (let i = 0; i < 5 && e instanceof Error && e.cause instanceof Error; i++) e = e.cause;
  const message = e instanceof Error ? e.message : String(e);
  const code = (e as { code?: unknown }).code;
  return typeof code === 'string' && !message.includes(code) ? `${message} (${code})` : message;
}

/** What an error status means for the person who asked for the file. */
export function statusError(res: Response, finalUrl: string, url: string): DownloadError {
  const host = new URL(finalUrl).host;
  const s = `${res.status}${res.statusText ? ` ${res.statusText}` : ''}`;
  if (res.status === 404) return new DownloadError(`not found (${s}): ${url}`, 'http');
  if (res.status === 401 || res.status === 403) {
    const hint = /huggingface\.co$/.test(host)
      ? '; a gated or private Hugging Face repository needs HF_TOKEN set in the environment'
      : '';
    return new DownloadError(`access denied by ${host} (${s})${hint}: ${url}`, 'http');
  }
  return new DownloadError(`${host} answered ${s}: ${url}`, 'http');
}
