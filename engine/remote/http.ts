// HTTP to an endpoint: every request has a deadline and can be aborted by its caller, and
// every failure becomes one EndpointError whose message a user can act on ("connection
// refused", "HTTP 401: invalid api key") instead of undici's "fetch failed".

export type FailureKind = 'unreachable' | 'timeout' | 'unauthorized' | 'http' | 'protocol';

export class EndpointError extends Error {
  constructor(
    message: string,
    readonly kind: FailureKind,
    /** The HTTP status, for `unauthorized` and `http`. */
    readonly status?: number,
  ) {
    super(message);
  }
}

/** The caller aborted the request (cancel, supersede, shutdown): not a failure. */
export class RequestAborted extends Error {
  constructor() {
    super('request aborted');
  }
}

export interface RequestOptions {
  apiKey?: string;
  /** Time allowed until the response headers arrive. */
  timeoutMs: number;
  signal?: AbortSignal;
}

/**
 * An AbortController that fires on the caller's signal and on a deadline that can be pushed
 * back (a stream that keeps sending stays alive; one that stalls is cut).
 */
export class Deadline {
  readonly controller = new AbortController();
  timedOut = false;
  private timer: NodeJS.Timeout | undefined;
  private readonly onAbort = () => this.controller.abort();

  constructor(
    ms: number,
    private readonly signal?: AbortSignal,
  ) {
    if (signal?.aborted) this.controller.abort();
    signal?.addEventListener('abort', this.onAbort, { once: true });
    this.extend(ms);
  }

  get aborted(): boolean {
    return this.controller.signal.aborted;
  }

  /** The caller (not the deadline) aborted. */
  get cancelled(): boolean {
    return this.signal?.aborted === true;
  }

  extend(ms: number): void {
    clearTimeout(this.timer);
    this.timer = setTimeout(() => {
      this.timedOut = true;
      this.controller.abort();
    }, ms);
  }

  dispose(): void {
    clearTimeout(this.timer);
    this.signal?.removeEventListener('abort', this.onAbort);
  }
}

function headers(apiKey: string | undefined, json: boolean): Record<string, string> {
  const h: Record<string, string> = { accept: json ? 'application/json' : 'text/event-stream' };
  if (json) h['content-type'] = 'application/json';
  if (apiKey) h.authorization = `Bearer ${apiKey}`;
  return h;
}

/**
 * Sends a request and returns the response once its headers are in (status ≥ 400 throws).
 * The body is left to the caller, who reads it under `deadline` and disposes it.
 */
export async function send(
  base: string,
  path: string,
  init: { method: 'GET' | 'POST'; body?: unknown; apiKey?: string; stream?: boolean },
  deadline: Deadline,
): Promise<Response> {
  let res: Response;
  try {
    res = await fetch(base + path, {
      method: init.method,
      headers: headers(init.apiKey, init.body !== undefined && !init.stream),
      body: init.body === undefined ? undefined : JSON.stringify(init.body),
      signal: deadline.controller.signal,
    });
  } catch (err) {
    throw failure(err, deadline, base);
  }
  if (res.status >= 400) {
    const text = await res.text().catch(() => '');
    throw httpError(res.status, text, init.apiKey !== undefined && init.apiKey !== '');
  }
  return res;
}

/** GET or POST returning parsed JSON (`undefined` when the body is not JSON). */
export async function requestJson(
  base: string,
  path: string,
  opts: RequestOptions & { method?: 'GET' | 'POST'; body?: unknown },
): Promise<{ status: number; json: unknown }> {
  const deadline = new Deadline(opts.timeoutMs, opts.signal);
  try {
    const res = await send(
      base,
      path,
      { method: opts.method ?? 'GET', body: opts.body, apiKey: opts.apiKey },
      deadline,
    );
    let text: string;
    try {
      text = await res.text();
    } catch (err) {
      throw failure(err, deadline, base);
    }
    try {
      return { status: res.status, json: text ? JSON.parse(text) : undefined };
    } catch {
      return { status: res.status, json: undefined };
    }
  } finally {
    deadline.dispose();
  }
}

/** What went wrong in fetch, in words; RequestAborted when the caller aborted. */
export function failure(err: unknown, deadline: Deadline, base: string): Error {
  if (err instanceof EndpointError || err instanceof RequestAborted) return err;
  if (deadline.cancelled) return new RequestAborted();
  if (deadline.timedOut) return new EndpointError(`no answer from ${base} in time`, 'timeout');
  const cause = (err as { cause?: { code?: string; message?: string } })?.cause;
  const code = cause?.code ?? '';
  const words: Record<string, string> = {
    ECONNREFUSED: 'connection refused',
    ECONNRESET: 'connection reset',
    ENOTFOUND: 'host not found',
    EAI_AGAIN: 'host name lookup failed',
    EHOSTUNREACH: 'host unreachable',
    ENETUNREACH: 'network unreachable',
    ETIMEDOUT: 'connection timed out',
    UND_ERR_SOCKET: 'connection closed by the server',
  };
  const what = words[code] ?? cause?.message ?? (err instanceof Error ? err.message : String(err));
  return new EndpointError(`${what} (${base})`, 'unreachable');
}

/** An HTTP error status with the server's own message (OpenAI, llama.cpp, Ollama, vLLM). */
export function httpError(status: number, body: string, sentKey: boolean): EndpointError {
  const said = serverMessage(body);
  if (status === 401 || status === 403) {
    const hint = sentKey
      ? 'the server refused the API key'
      : 'the server wants an API key (Leapfrog: Set Endpoint API Key…, or --api-key)';
    return new EndpointError(
      `HTTP ${status}: ${hint}${said ? ` (${said})` : ''}`,
      'unauthorized',
      status,
    );
  }
  return new EndpointError(`HTTP ${status}${said ? `: ${said}` : ''}`, 'http', status);
}

function serverMessage(body: string): string {
  let said = body.trim();
  try {
    const j = JSON.parse(body) as Record<string, unknown>;
    const e = j.error;
    if (typeof e === 'string') said = e;
    else if (e && typeof e === 'object' && typeof (e as { message?: unknown }).message === 'string')
      said = (e as { message: string }).message;
    else if (typeof j.message === 'string') said = j.message;
    else if (typeof j.detail === 'string') said = j.detail;
  } catch {
    // not JSON: the text itself
  }
  said = said.replace(/\s+/g, ' ');
  return said.length > 200 ? `${said.slice(0, 200)}…` : said;
}
