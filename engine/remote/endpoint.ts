// A team's server as the engine's generator: probes it, keeps its state (probing → ok ⇄
// down), and runs completions and chat turns on it. A server that is down is a state, not a
// stream of errors: completions come back empty without a request, chat gets one clear
// error, the log gets one line per change of state, and the server is probed again with
// backoff (5 s doubling to 30 s, sooner when a request arrives after the wait).
import type { GenerateStats, GenerationHandle } from '../native/addon';
import type {
  ChatMessage,
  EndpointCompletionMode,
  EndpointState,
  EndpointStatus,
} from '../protocol';
import type { LogLevel } from '../server/log';
import { chatChunk, chatRequest, type RemoteChatOptions } from './chat-api';
import {
  completionChunk,
  completionRequest,
  type RemotePrompt,
  type RemoteSampling,
} from './completion-api';
import { normalizeEndpointUrl } from './endpoint-url';
import { Deadline, EndpointError, RequestAborted, failure, send } from './http';
import { probeEndpoint, type EndpointInfo } from './probe';
import { readEvents } from './sse';
import { emptyStats } from '../scheduler/scheduler';

export interface EndpointConfig {
  url: string;
  /** The model id to ask for; absent: the first the server lists. */
  model?: string;
  apiKey?: string;
}

export interface EndpointOptions {
  onChange?: () => void;
  log?: (level: LogLevel, message: string) => void;
  probeTimeoutMs?: number;
  /** First wait before probing a server that is down again (doubled up to 6×). */
  retryMs?: number;
}

/** A completion request in flight; `failed` once it ended without an answer. */
export interface RemoteGeneration extends GenerationHandle {
  readonly failed: boolean;
}

export interface RemoteChatResult {
  finishReason: 'stop' | 'length' | 'cancelled';
  promptTokens: number;
  generated: number;
  decodeMs: number;
}

/** Waits for a completion: headers (a busy server queues the request) and between chunks. */
const COMPLETION_IDLE_MS = 15_000;
/** A chat turn's prompt can take a big model a while; after that, chunks keep it alive. */
const CHAT_IDLE_MS = 120_000;

export function defaultRetryMs(env: NodeJS.ProcessEnv = process.env): number {
  const v = Number(env.LEAPFROG_ENDPOINT_RETRY_MS);
  return Number.isFinite(v) && v > 0 ? v : 5000;
}

export class RemoteEndpoint {
  readonly url: string;
  private state: EndpointState = 'probing';
  private message: string | undefined;
  private info: EndpointInfo | undefined;
  private probing: Promise<void> | undefined;
  private retryTimer: NodeJS.Timeout | undefined;
  private nextProbeAt = 0;
  private readonly firstRetryMs: number;
  private retryMs: number;
  private readonly invalid: string | undefined;
  private disposed = false;
  private readonly inflight = new Set<AbortController>();
  /** Per-request failures that do not take the server down, each logged once. */
  private readonly logged = new Set<string>();

  constructor(
    private readonly config: EndpointConfig,
    private readonly opts: EndpointOptions = {},
  ) {
    let url = config.url.trim();
    try {
      url = normalizeEndpointUrl(url);
    } catch (err) {
      this.invalid = (err as Error).message;
    }
    this.url = url;
    this.firstRetryMs = opts.retryMs ?? defaultRetryMs();
    this.retryMs = this.firstRetryMs;
  }

  /** Starts the first probe (a URL that cannot be one is down until the setting changes). */
  start(): void {
    if (this.invalid) this.setDown(this.invalid, false);
    else void this.probe();
  }

  status(): EndpointStatus {
    const i = this.info;
    // llama.cpp ignores the id requests name: show the one it lists.
    const model = i?.model ?? i?.models[0];
    return {
      url: this.url,
      ...(i ? { kind: i.kind, completion: i.completion } : {}),
      ...(model !== undefined ? { model } : {}),
      state: this.state,
      ...(this.state === 'down' && this.message ? { message: this.message } : {}),
    };
  }

  get current(): EndpointInfo | undefined {
    return this.info;
  }

  /**
   * What the server is, once it is up: waits for a probe in progress, starts one when the
   * backoff is over; undefined while it is down.
   */
  async ready(): Promise<EndpointInfo | undefined> {
    if (this.state === 'down' && !this.invalid && Date.now() >= this.nextProbeAt) void this.probe();
    if (this.probing) await this.probing;
    return this.state === 'ok' ? this.info : undefined;
  }

  /** Streams a completion's text to `onText`; `done` always resolves (failures set `failed`). */
  complete(
    prompt: RemotePrompt,
    sampling: RemoteSampling,
    onText: (text: string) => void,
  ): RemoteGeneration {
    const ac = this.track(new AbortController());
    let failed = false;
    const started = Date.now();
    let firstAt = 0;
    let pieces = 0;
    let counted: number | undefined;
    const run = async (): Promise<void> => {
      for (let attempt = 0; attempt < 3; attempt++) {
        const info = this.info;
        if (this.state !== 'ok' || !info) {
          failed = true;
          return;
        }
        const mode = info.completion;
        const { path, body } = completionRequest(mode, info.model, prompt, sampling);
        const deadline = new Deadline(COMPLETION_IDLE_MS, ac.signal);
        try {
          const res = await send(
            this.url,
            path,
            { method: 'POST', body, apiKey: this.config.apiKey, stream: true },
            deadline,
          );
          await readEvents(
            res,
            (data) => {
              const chunk = completionChunk(mode, data);
              if (chunk.tokens !== undefined) counted = chunk.tokens;
              if (chunk.text) {
                if (!firstAt) firstAt = Date.now();
                pieces++;
                onText(chunk.text);
              }
              return !chunk.done && !ac.signal.aborted;
            },
            () => deadline.extend(COMPLETION_IDLE_MS),
          );
          return;
        } catch (err) {
          const e = failure(err, deadline, this.url);
          if (e instanceof RequestAborted || ac.signal.aborted) return;
          const next = e instanceof EndpointError ? this.fallback(info, mode, e) : undefined;
          if (next) {
            this.opts.log?.(
              'warn',
              `endpoint ${this.url}: ${path} refused (${e.message}); completions now ${describeMode(next)}`,
            );
            info.completion = next;
            this.opts.onChange?.();
            continue;
          }
          this.requestFailed(e, 'completion');
          failed = true;
          return;
        } finally {
          // Ends the request when the stream stopped early (stop rules, a done chunk before
          // the end): the server stops generating when its socket closes.
          deadline.controller.abort();
          deadline.dispose();
        }
      }
    };
    const done = run().then((): GenerateStats => {
      this.inflight.delete(ac);
      const end = Date.now();
      return {
        ...emptyStats(false),
        promptMs: (firstAt || end) - started,
        decodeMs: firstAt ? end - firstAt : 0,
        generated: counted ?? pieces,
        aborted: ac.signal.aborted,
      };
    });
    return {
      done,
      abort: () => ac.abort(),
      get failed() {
        return failed;
      },
    };
  }

  /**
   * Streams a chat reply to `onText` (returning false stops it). Throws an EndpointError
   * when the server is down or fails; an abort through `signal` ends it as cancelled.
   */
  async chat(
    messages: ChatMessage[],
    o: RemoteChatOptions,
    onText: (text: string) => boolean | void,
    signal: AbortSignal,
  ): Promise<RemoteChatResult> {
    const info = await this.ready();
    if (!info) {
      throw new EndpointError(
        `the endpoint ${this.url} is down: ${this.message ?? 'not reachable'}`,
        'unreachable',
      );
    }
    const ac = this.track(new AbortController());
    const onAbort = () => ac.abort();
    signal.addEventListener('abort', onAbort, { once: true });
    if (signal.aborted) ac.abort();
    const deadline = new Deadline(CHAT_IDLE_MS, ac.signal);
    let firstAt = 0;
    let pieces = 0;
    let finish: string | undefined;
    let promptTokens = 0;
    let counted: number | undefined;
    let stopped = false;
    try {
      const { path, body } = chatRequest(info.model, messages, o);
      const res = await send(
        this.url,
        path,
        { method: 'POST', body, apiKey: this.config.apiKey, stream: true },
        deadline,
      );
      await readEvents(
        res,
        (data) => {
          const c = chatChunk(data);
          if (c.promptTokens !== undefined) promptTokens = c.promptTokens;
          if (c.completionTokens !== undefined) counted = c.completionTokens;
          if (c.finishReason) finish = c.finishReason;
          if (c.text) {
            if (!firstAt) firstAt = Date.now();
            pieces++;
            if (onText(c.text) === false) stopped = true;
          }
          return !stopped && !ac.signal.aborted;
        },
        () => deadline.extend(CHAT_IDLE_MS),
      );
    } catch (err) {
      const e = failure(err, deadline, this.url);
      if (!(e instanceof RequestAborted) && !signal.aborted) {
        this.requestFailed(e, 'chat');
        throw e;
      }
    } finally {
      deadline.controller.abort();
      deadline.dispose();
      signal.removeEventListener('abort', onAbort);
      this.inflight.delete(ac);
    }
    return {
      finishReason: signal.aborted ? 'cancelled' : finish === 'length' ? 'length' : 'stop',
      promptTokens,
      generated: counted ?? pieces,
      decodeMs: firstAt ? Date.now() - firstAt : 0,
    };
  }

  /** Stops probing and every request in flight. */
  dispose(): void {
    this.disposed = true;
    clearTimeout(this.retryTimer);
    for (const ac of this.inflight) ac.abort();
    this.inflight.clear();
  }

  private track(ac: AbortController): AbortController {
    this.inflight.add(ac);
    return ac;
  }

  private probe(): Promise<void> {
    if (this.probing) return this.probing;
    clearTimeout(this.retryTimer);
    const ac = this.track(new AbortController());
    this.probing = probeEndpoint(this.url, {
      apiKey: this.config.apiKey,
      model: this.config.model,
      timeoutMs: this.opts.probeTimeoutMs,
      signal: ac.signal,
    })
      .then(
        (info) => {
          if (this.disposed) return;
          this.info = info;
          this.retryMs = this.firstRetryMs;
          this.logged.clear();
          const was = this.state;
          this.state = 'ok';
          this.message = undefined;
          if (was !== 'ok') {
            const model = info.model !== undefined ? `, model ${info.model}` : '';
            this.opts.log?.(
              'info',
              `endpoint ${this.url}: ${info.kind}${model}, completions ${describeMode(info.completion)}`,
            );
          }
          this.opts.onChange?.();
        },
        (err: unknown) => {
          if (this.disposed || err instanceof RequestAborted) return;
          this.setDown(err instanceof Error ? err.message : String(err), true);
        },
      )
      .finally(() => {
        this.inflight.delete(ac);
        this.probing = undefined;
      });
    return this.probing;
  }

  /** A failed request: unreachable, unauthorized or failing servers are down; others are logged once. */
  private requestFailed(e: Error, what: string): void {
    if (e instanceof EndpointError && takesServerDown(e)) {
      this.setDown(e.message, true);
      return;
    }
    const line = `endpoint ${this.url}: ${what} failed: ${e.message}`;
    if (this.logged.has(line) || this.logged.size > 50) return;
    this.logged.add(line);
    this.opts.log?.('warn', line);
  }

  private setDown(reason: string, retry: boolean): void {
    if (this.disposed) return;
    const was = this.state;
    const changed = was !== 'down' || this.message !== reason;
    this.state = 'down';
    this.message = reason;
    if (was !== 'down') {
      const again = retry ? `; trying again in ${Math.round(this.retryMs / 100) / 10} s` : '';
      this.opts.log?.('warn', `endpoint ${this.url} is down: ${reason}${again}`);
    }
    if (changed) this.opts.onChange?.();
    if (!retry) return;
    clearTimeout(this.retryTimer);
    this.nextProbeAt = Date.now() + this.retryMs;
    this.retryTimer = setTimeout(() => void this.probe(), this.retryMs);
    this.retryTimer.unref();
    this.retryMs = Math.min(this.retryMs * 2, this.firstRetryMs * 6);
  }

  /** The next way to ask for completions when the server refuses this one, if any. */
  private fallback(
    info: EndpointInfo,
    mode: EndpointCompletionMode,
    e: EndpointError,
  ): EndpointCompletionMode | undefined {
    if (e.kind !== 'http' || mode === 'prefix') return undefined;
    const status = e.status ?? 0;
    // "does not support insert" (Ollama), "suffix is not currently supported" (vLLM), "Infill
    // is not supported by this model" (llama.cpp, 501): the request form, not the server.
    const saysForm = /infill|suffix|insert|fim|not supported/i.test(e.message);
    if (mode === 'infill') {
      if (![404, 405, 501].includes(status) && !(status === 400 && saysForm)) return undefined;
      return info.kind === 'llama.cpp' ? 'prefix' : 'suffix';
    }
    return (status === 400 || status === 501) && saysForm ? 'prefix' : undefined;
  }
}

/** Unreachable, timed out, key refused, model missing (404) or server failing (5xx). */
function takesServerDown(e: EndpointError): boolean {
  if (e.kind === 'unreachable' || e.kind === 'timeout' || e.kind === 'unauthorized') return true;
  return e.kind === 'http' && (e.status === 404 || (e.status ?? 0) >= 500);
}

function describeMode(mode: EndpointCompletionMode): string {
  return mode === 'infill'
    ? 'by /infill'
    : mode === 'suffix'
      ? 'by /v1/completions with suffix'
      : 'by /v1/completions, prefix only';
}
