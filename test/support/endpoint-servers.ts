// Small HTTP servers on loopback that speak the APIs of the servers a team runs, as those
// servers answer them (paths, bodies, stream chunks and errors taken from their docs and
// sources): llama.cpp's server (/health, /props, /v1/models, POST /infill, chat), Ollama
// (/api/version, /v1/models, /v1/completions with `suffix`, chat) and vLLM (/health,
// /v1/models with max_model_len, /v1/completions that refuses `suffix`, chat). Each records
// the requests it got and whether the client closed a stream before it ended.
import {
  createServer,
  type IncomingHttpHeaders,
  type Server,
  type ServerResponse,
} from 'node:http';
import type { AddressInfo } from 'node:net';

export type ServerKind = 'llama.cpp' | 'ollama' | 'vllm';

export interface Recorded {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  body: Record<string, unknown> | undefined;
  /** The client closed the connection before the response was complete. */
  closedEarly: boolean;
  /** The response is over (complete, or closed by the client). */
  ended: boolean;
}

export interface FakeOptions {
  port?: number;
  /** Requests without `Authorization: Bearer <apiKey>` get 401. */
  apiKey?: string;
  /** The model has no FIM tokens: llama.cpp's /infill answers 501, Ollama refuses `suffix`. */
  noFim?: boolean;
}

export const MODEL_IDS: Record<ServerKind, string> = {
  'llama.cpp': 'qwen2.5-coder-1.5b-q8_0.gguf',
  ollama: 'qwen2.5-coder:1.5b-base',
  vllm: 'Qwen/Qwen2.5-Coder-7B',
};

export class FakeServer {
  readonly requests: Recorded[] = [];
  /** The completion text streamed back, in pieces of `pieceChars`. */
  completion: (body: Record<string, unknown>) => string = () => 'x = 1';
  chatReply = 'Hello from the server.';
  pieceChars = 3;
  /** 'hold': stream the first piece, then nothing until the client goes away. */
  behaviour: 'ok' | 'hold' | 'fail' = 'ok';
  /** Resolves the next time a request arrives at `path`. */
  private waiters: { path: string; resolve: (r: Recorded) => void }[] = [];
  private closers: { rec: Recorded; resolve: () => void }[] = [];

  private constructor(
    readonly kind: ServerKind,
    private readonly server: Server,
    private readonly opts: FakeOptions,
  ) {}

  static async start(kind: ServerKind, opts: FakeOptions = {}): Promise<FakeServer> {
    let fake: FakeServer | undefined;
    const server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        let body: Record<string, unknown> | undefined;
        try {
          body = text ? (JSON.parse(text) as Record<string, unknown>) : undefined;
        } catch {
          body = undefined;
        }
        const rec: Recorded = {
          method: req.method ?? '',
          path: (req.url ?? '').split('?')[0],
          headers: req.headers,
          body,
          closedEarly: false,
          ended: false,
        };
        fake!.requests.push(rec);
        res.on('close', () => {
          if (!res.writableFinished) rec.closedEarly = true;
          rec.ended = true;
          for (const c of fake!.closers.filter((c) => c.rec === rec)) c.resolve();
        });
        for (const w of fake!.waiters.filter((w) => w.path === rec.path)) w.resolve(rec);
        fake!.waiters = fake!.waiters.filter((w) => w.path !== rec.path);
        fake!.handle(rec, res);
      });
    });
    fake = new FakeServer(kind, server, opts);
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(opts.port ?? 0, '127.0.0.1', () => resolve());
    });
    return fake;
  }

  get url(): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  /** Requests that reached `path`. */
  to(path: string): Recorded[] {
    return this.requests.filter((r) => r.path === path);
  }

  nextRequest(path: string): Promise<Recorded> {
    return new Promise((resolve) => this.waiters.push({ path, resolve }));
  }

  /** Resolves when the response to `rec` is closed (by either side). */
  closed(rec: Recorded): Promise<void> {
    if (rec.ended) return Promise.resolve();
    return new Promise((resolve) => this.closers.push({ rec, resolve }));
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((r) => this.server.close(() => r()));
  }

  private handle(rec: Recorded, res: ServerResponse): void {
    if (this.opts.apiKey && rec.headers.authorization !== `Bearer ${this.opts.apiKey}`) {
      return json(res, 401, this.kind === 'vllm' ? { error: 'Unauthorized' } : invalidKey());
    }
    if (this.behaviour === 'fail') {
      return json(res, 503, {
        error: { code: 503, message: 'Loading model', type: 'unavailable_error' },
      });
    }
    const route = `${rec.method} ${rec.path}`;
    const body = rec.body ?? {};
    switch (this.kind) {
      case 'llama.cpp':
        if (route === 'GET /health') return json(res, 200, { status: 'ok' });
        if (route === 'GET /props') {
          return json(res, 200, {
            default_generation_settings: { n_ctx: 8192, temperature: 0.8, n_predict: -1 },
            total_slots: 1,
            model_path: `/models/${MODEL_IDS['llama.cpp']}`,
            chat_template: '{{ messages }}',
          });
        }
        if (route === 'GET /v1/models') return json(res, 200, modelList('llama.cpp', 'llamacpp'));
        if (route === 'POST /infill') {
          if (this.opts.noFim) {
            return json(res, 501, {
              error: {
                code: 501,
                message: 'Infill is not supported by this model: prefix token is missing.',
                type: 'not_supported_error',
              },
            });
          }
          return this.stream(res, body, 'infill');
        }
        if (route === 'POST /v1/completions') return this.stream(res, body, 'text');
        if (route === 'POST /v1/chat/completions') return this.stream(res, body, 'chat');
        return json(res, 404, {
          error: { code: 404, message: 'File Not Found', type: 'not_found_error' },
        });
      case 'ollama':
        if (route === 'GET /api/version') return json(res, 200, { version: '0.6.2' });
        if (route === 'GET /v1/models') return json(res, 200, modelList('ollama', 'library'));
        if (route === 'POST /v1/completions' || route === 'POST /v1/chat/completions') {
          if (body.model !== MODEL_IDS.ollama) {
            return json(res, 404, {
              error: {
                message: `model "${String(body.model)}" not found, try pulling it first`,
                type: 'api_error',
                param: null,
                code: null,
              },
            });
          }
          if (this.opts.noFim && body.suffix !== undefined) {
            return json(res, 400, {
              error: {
                message: `registry.ollama.ai/library/${MODEL_IDS.ollama} does not support insert`,
                type: 'api_error',
                param: null,
                code: null,
              },
            });
          }
          return this.stream(res, body, rec.path.endsWith('chat/completions') ? 'chat' : 'text');
        }
        res.writeHead(404, { 'content-type': 'text/plain' });
        return void res.end('404 page not found');
      case 'vllm':
        if (route === 'GET /health') return void res.writeHead(200).end();
        if (route === 'GET /v1/models') return json(res, 200, modelList('vllm', 'vllm'));
        if (route === 'POST /v1/completions') {
          if (body.suffix !== undefined) {
            return json(res, 400, {
              object: 'error',
              message: 'suffix is not currently supported',
              type: 'BadRequestError',
              param: null,
              code: 400,
            });
          }
          return this.stream(res, body, 'text');
        }
        if (route === 'POST /v1/chat/completions') return this.stream(res, body, 'chat');
        return json(res, 404, { detail: 'Not Found' });
    }
  }

  /** Streams the scripted text as the API does: SSE chunks, `[DONE]` for the /v1 forms. */
  private stream(
    res: ServerResponse,
    body: Record<string, unknown>,
    form: 'infill' | 'text' | 'chat',
  ): void {
    const text = form === 'chat' ? this.chatReply : this.completion(body);
    const pieces: string[] = [];
    for (let i = 0; i < text.length; i += this.pieceChars) {
      pieces.push(text.slice(i, i + this.pieceChars));
    }
    const id = 'cmpl-1';
    const created = Math.floor(Date.now() / 1000);
    const model = String(body.model ?? MODEL_IDS[this.kind]);
    const chunk = (piece: string, last: boolean): unknown => {
      if (form === 'infill') {
        return last
          ? { content: '', stop: true, stop_type: 'eos', tokens_predicted: pieces.length }
          : { index: 0, content: piece, stop: false, id_slot: 0, tokens_predicted: 1 };
      }
      if (form === 'text') {
        return {
          id,
          object: 'text_completion',
          created,
          model,
          choices: [{ text: piece, index: 0, finish_reason: last ? 'stop' : null }],
        };
      }
      return {
        id,
        object: 'chat.completion.chunk',
        created,
        model,
        choices: [
          { index: 0, delta: last ? {} : { content: piece }, finish_reason: last ? 'stop' : null },
        ],
      };
    };
    if (body.stream !== true) {
      // Not what Leapfrog asks for; answered the way the servers do, for completeness.
      return json(res, 200, chunk(text, false));
    }
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
    const write = (event: unknown) => res.write(`data: ${JSON.stringify(event)}\n\n`);
    if (this.behaviour === 'hold') {
      write(chunk(pieces[0] ?? ' ', false));
      return; // nothing more until the client closes the connection
    }
    let i = 0;
    const next = () => {
      if (res.destroyed) return;
      if (i < pieces.length) {
        write(chunk(pieces[i++], false));
        setTimeout(next, 1);
        return;
      }
      write(chunk('', true));
      if (form !== 'infill') res.write('data: [DONE]\n\n');
      res.end();
    };
    next();
  }
}

function modelList(kind: ServerKind, ownedBy: string): unknown {
  const entry: Record<string, unknown> = {
    id: MODEL_IDS[kind],
    object: 'model',
    created: 1_700_000_000,
    owned_by: ownedBy,
  };
  if (kind === 'vllm') Object.assign(entry, { root: MODEL_IDS.vllm, max_model_len: 32768 });
  return { object: 'list', data: [entry] };
}

function invalidKey(): unknown {
  return { error: { code: 401, message: 'Invalid API Key', type: 'authentication_error' } };
}

function json(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
}
