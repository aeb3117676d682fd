// Reading request bodies (with a size limit) and writing JSON and server-sent events.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { ApiError } from './api-error';
import { isObject, type JsonObject } from './request-fields';

/** The largest request body accepted (a long prompt with context files fits easily). */
export const MAX_BODY_BYTES = 4 * 1024 * 1024;

/**
 * The body as a JSON object. A body over the limit is read to its end (and dropped), so
 * that the client, still sending, gets the 413 instead of a reset connection; past a
 * hard cap the connection is cut.
 */
export function readJsonBody(req: IncomingMessage, limit = MAX_BODY_BYTES): Promise<JsonObject> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let bytes = 0;
    let tooLarge = false;
    const declared = Number(req.headers['content-length']);
    if (Number.isFinite(declared) && declared > limit * 16) {
      req.destroy();
      reject(tooLargeError(limit));
      return;
    }
    req.on('data', (chunk: Buffer) => {
      bytes += chunk.length;
      if (bytes > limit) {
        tooLarge = true;
        chunks.length = 0;
        if (bytes > limit * 16) req.destroy();
        return;
      }
      chunks.push(chunk);
    });
    req.on('error', reject);
    req.on('close', () => {
      if (!req.complete) reject(new ApiError(400, 'the request body was cut short'));
    });
    req.on('end', () => {
      if (tooLarge) return reject(tooLargeError(limit));
      const text = Buffer.concat(chunks).toString('utf8');
      if (text.trim() === '') {
        return reject(new ApiError(400, 'the request body is empty (expected a JSON object)'));
      }
      let value: unknown;
      try {
        value = JSON.parse(text);
      } catch (e) {
        return reject(
          new ApiError(400, `the request body is not valid JSON (${(e as Error).message})`),
        );
      }
      if (!isObject(value))
        return reject(new ApiError(400, 'the request body must be a JSON object'));
      resolve(value);
    });
  });
}

function tooLargeError(limit: number): ApiError {
  return new ApiError(
    413,
    `the request body is larger than ${limit / (1024 * 1024)} MiB`,
    null,
    'request_too_large',
  );
}

export function sendJson(
  res: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): void {
  if (res.headersSent || res.destroyed) return;
  const text = JSON.stringify(body);
  res.writeHead(status, {
    'Content-Type': 'application/json; charset=utf-8',
    'Content-Length': Buffer.byteLength(text),
    ...headers,
  });
  res.end(text);
}

export function sendError(res: ServerResponse, err: ApiError, headers?: Record<string, string>) {
  sendJson(res, err.status, err.body(), headers);
}

/** A server-sent event stream: `data: {json}\n\n` per event. */
export class EventStream {
  constructor(private readonly res: ServerResponse) {
    res.writeHead(200, {
      'Content-Type': 'text/event-stream; charset=utf-8',
      'Cache-Control': 'no-cache',
      Connection: 'keep-alive',
      'X-Accel-Buffering': 'no',
    });
    res.flushHeaders();
  }

  get open(): boolean {
    return !this.res.writableEnded && !this.res.destroyed;
  }

  send(data: unknown): void {
    if (this.open) this.res.write(`data: ${JSON.stringify(data)}\n\n`);
  }

  /** OpenAI's end of stream: `data: [DONE]`. */
  done(): void {
    if (this.open) this.res.write('data: [DONE]\n\n');
    this.end();
  }

  end(): void {
    if (this.open) this.res.end();
  }
}
