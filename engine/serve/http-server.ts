// The HTTP front: routes, the API key, and the error contract. Every failure is an
// OpenAI-style error body with its status (400 bad request, 401 key, 404 route, 405 method,
// 413 size, 503 not ready); nothing a client sends can throw past this file.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createHash, timingSafeEqual } from 'node:crypto';
import { ApiError } from './api-error';
import { readJsonBody, sendError, sendJson } from './http-io';
import { completionsRoute } from './completions-route';
import { chatRoute } from './chat-route';
import { infillRoute } from './infill-route';
import type { JsonObject } from './request-fields';
import type { RunNote } from './run-request';
import type { ServeEngine } from './serve-engine';

export interface HttpOptions {
  /** Required as `Authorization: Bearer <key>` on every route but /health, when set. */
  apiKey?: string;
  log: (message: string) => void;
}

type Handler = (req: IncomingMessage, res: ServerResponse) => Promise<RunNote | void>;

interface Route {
  method: 'GET' | 'POST';
  /** Open without the API key. */
  open?: boolean;
  handle: Handler;
}

export function createApiServer(serve: ServeEngine, opts: HttpOptions): Server {
  const post =
    (route: (s: ServeEngine, body: JsonObject, res: ServerResponse) => Promise<RunNote>): Handler =>
    async (req, res) =>
      route(serve, await readJsonBody(req), res);
  const routes: Record<string, Route> = {
    '/health': { method: 'GET', open: true, handle: async (_req, res) => health(serve, res) },
    '/v1/models': { method: 'GET', handle: async (_req, res) => models(serve, res) },
    '/v1/completions': { method: 'POST', handle: post(completionsRoute) },
    '/v1/chat/completions': { method: 'POST', handle: post(chatRoute) },
    '/infill': { method: 'POST', handle: post(infillRoute) },
  };
  const keyMatches = opts.apiKey === undefined ? undefined : bearerChecker(opts.apiKey);

  return createServer((req, res) => {
    const started = Date.now();
    const path = pathOf(req.url);
    const done = (note?: RunNote | void) =>
      opts.log(
        `${req.method} ${path} ${res.statusCode} ${Date.now() - started} ms${note ? `: ${note}` : ''}`,
      );
    const run = async (): Promise<RunNote | void> => {
      const route = routes[path] ?? modelRoute(serve, path);
      if (!route?.open && keyMatches && !keyMatches(req.headers.authorization)) {
        throw new ApiError(
          401,
          'missing or incorrect API key (send it as "Authorization: Bearer <key>")',
          null,
          'invalid_api_key',
        );
      }
      if (!route) throw new ApiError(404, `no route ${req.method} ${path}`, null, 'not_found');
      if (req.method !== route.method && !(route.method === 'GET' && req.method === 'HEAD')) {
        throw new MethodNotAllowed(
          route.method,
          `${path} takes ${route.method}, not ${req.method}`,
        );
      }
      return route.handle(req, res);
    };
    run().then(done, (err: unknown) => {
      const apiError =
        err instanceof ApiError ? err : new ApiError(500, `internal error: ${messageOf(err)}`);
      const headers: Record<string, string> =
        err instanceof MethodNotAllowed ? { Allow: err.allow } : {};
      // After a 413 the rest of an over-long body is not worth reading.
      if (apiError.status === 413) headers.Connection = 'close';
      if (!res.headersSent) sendError(res, apiError, headers);
      else res.end();
      done(apiError.message);
    });
  });
}

class MethodNotAllowed extends ApiError {
  constructor(
    readonly allow: string,
    message: string,
  ) {
    super(405, message, null, 'method_not_allowed');
  }
}

function health(serve: ServeEngine, res: ServerResponse): void {
  const ready = serve.current;
  if (!ready) {
    let body: object = { status: 'loading' };
    try {
      serve.whenServing();
    } catch (e) {
      const code = (e as ApiError).code;
      if (code !== 'model_loading') body = { status: 'error', message: (e as Error).message };
    }
    return sendJson(res, 503, body);
  }
  const p = ready.pool.snapshot();
  sendJson(res, 200, {
    status: 'ok',
    slots_idle: p.slots - p.busy,
    slots_processing: p.busy,
    requests_queued: p.queued,
  });
}

function modelEntry(serve: ServeEngine): object[] {
  const ready = serve.current;
  if (!ready) return [];
  const { engine } = ready;
  return [
    {
      id: ready.modelId,
      object: 'model',
      created: Math.floor(ready.loadedAt / 1000),
      owned_by: 'leapfrog',
      meta: {
        path: engine.paths.model,
        draft: engine.paths.draft,
        architecture: engine.info.architecture,
        n_params: engine.info.nParams,
        n_ctx: engine.nCtx,
        n_ctx_train: engine.info.nCtxTrain,
        fim: engine.fim.family !== 'none',
        parallel: serve.parallel,
      },
    },
  ];
}

function models(serve: ServeEngine, res: ServerResponse): void {
  serve.whenServing();
  sendJson(res, 200, { object: 'list', data: modelEntry(serve) });
}

/** GET /v1/models/{id}: the loaded model, or 404. */
function modelRoute(serve: ServeEngine, path: string): Route | undefined {
  const prefix = '/v1/models/';
  if (!path.startsWith(prefix) || path.length === prefix.length) return undefined;
  let id: string;
  try {
    id = decodeURIComponent(path.slice(prefix.length));
  } catch {
    throw new ApiError(400, `malformed model id in ${path}`, 'model');
  }
  return {
    method: 'GET',
    handle: async (_req, res) => {
      serve.whenServing();
      const entry = modelEntry(serve).find((m) => (m as { id: string }).id === id);
      if (!entry) throw new ApiError(404, `no model '${id}' is loaded`, 'model', 'model_not_found');
      sendJson(res, 200, entry);
    },
  };
}

function pathOf(url: string | undefined): string {
  try {
    return new URL(url ?? '/', 'http://localhost').pathname;
  } catch {
    return url ?? '/';
  }
}

/** Compares keys in constant time (through digests, so lengths do not leak either). */
function bearerChecker(key: string): (header: string | undefined) => boolean {
  const want = createHash('sha256').update(key).digest();
  return (header) => {
    const m = /^Bearer\s+(.+)$/i.exec(header ?? '');
    if (!m) return false;
    return timingSafeEqual(createHash('sha256').update(m[1].trim()).digest(), want);
  };
}

function messageOf(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
