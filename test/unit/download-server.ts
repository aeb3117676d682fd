// A real HTTP server on loopback for the download tests, serving one GGUF-shaped file in
// the ways servers really behave: with Range support (206), ignoring Range (200), cutting
// the connection mid-body, stalling, redirecting as Hugging Face does (a 302 that carries
// the sha256 in `x-linked-etag`), 404, an HTML page instead of the file. Every request's
// path and headers are recorded so a test can check what the client asked for.
import { createHash, randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Recorded {
  path: string;
  range?: string;
  authorization?: string;
}

export interface FileServer {
  base: string;
  /** The file every route serves (it starts with "GGUF"). */
  body: Buffer;
  sha256: string;
  requests: Recorded[];
  /** Routes that cut the connection cut it at this byte (of the whole file). */
  cutAt: number;
  close(): Promise<void>;
}

export function sha256(buf: Buffer): string {
  return createHash('sha256').update(buf).digest('hex');
}

export function ggufBytes(n: number): Buffer {
  return Buffer.concat([Buffer.from('GGUF'), randomBytes(n - 4)]);
}

/** Serves `content` (a size: random bytes after "GGUF"; a Buffer: those bytes). */
export async function startFileServer(content: number | Buffer = 256 * 1024): Promise<FileServer> {
  const body = typeof content === 'number' ? ggufBytes(content) : content;
  const size = body.length;
  const hash = sha256(body);
  const requests: Recorded[] = [];
  let cutsLeft = new Map<string, number>();
  const state: { cutAt: number } = { cutAt: Math.floor(size / 3) };

  function serveRange(req: IncomingMessage, res: ServerResponse, extra: Record<string, string>) {
    const m = /^bytes=(\d+)-$/.exec(req.headers.range ?? '');
    if (m) {
      const start = Number(m[1]);
      if (start >= body.length) {
        res.writeHead(416, { 'content-range': `bytes */${body.length}` });
        res.end();
        return;
      }
      res.writeHead(206, {
        ...extra,
        'content-length': String(body.length - start),
        'content-range': `bytes ${start}-${body.length - 1}/${body.length}`,
      });
      res.end(body.subarray(start));
      return;
    }
    res.writeHead(200, { ...extra, 'content-length': String(body.length) });
    res.end(body);
  }

  const server: Server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://x');
    requests.push({
      path: url.pathname,
      range: req.headers.range,
      authorization: req.headers.authorization,
    });
    const etag = { etag: `"${hash}"` };
    switch (url.pathname) {
      case '/model.gguf':
        return serveRange(req, res, etag);
      case '/no-sha.gguf':
        return serveRange(req, res, {});
      case '/wrong-sha.gguf':
        return serveRange(req, res, { 'x-linked-etag': `"${'0'.repeat(64)}"` });
      case '/ignores-range.gguf':
        res.writeHead(200, { ...etag, 'content-length': String(body.length) });
        return res.end(body);
      case '/cut-once.gguf':
      case '/cut-always.gguf': {
        // Headers promise the whole file; the socket dies after `cutAt` bytes of it.
        const left = cutsLeft.get(url.pathname) ?? (url.pathname === '/cut-once.gguf' ? 1 : 1e9);
        if (left > 0) {
          cutsLeft.set(url.pathname, left - 1);
          const m = /^bytes=(\d+)-$/.exec(req.headers.range ?? '');
          const start = m ? Number(m[1]) : 0;
          const headers: Record<string, string> = {
            ...etag,
            'content-length': String(body.length - start),
          };
          if (m) headers['content-range'] = `bytes ${start}-${body.length - 1}/${body.length}`;
          res.writeHead(m ? 206 : 200, headers);
          res.write(body.subarray(start, Math.max(start, state.cutAt)), () =>
            setTimeout(() => req.socket.destroy(), 20),
          );
          return;
        }
        return serveRange(req, res, etag);
      }
      case '/stall.gguf':
        // Some bytes, then silence with the socket open.
        res.writeHead(200, { 'content-length': String(body.length) });
        res.write(body.subarray(0, 1000));
        return;
      case '/slow.gguf': {
        // 4 KiB every 10 ms, so that a test can cancel in the middle.
        const m = /^bytes=(\d+)-$/.exec(req.headers.range ?? '');
        if (m) return serveRange(req, res, etag);
        res.writeHead(200, { ...etag, 'content-length': String(body.length) });
        let at = 0;
        const tick = setInterval(() => {
          if (res.destroyed) return clearInterval(tick);
          res.write(body.subarray(at, at + 4096));
          at += 4096;
          if (at >= body.length) {
            clearInterval(tick);
            res.end();
          }
        }, 10);
        res.on('close', () => clearInterval(tick));
        return;
      }
      case '/org/repo/resolve/main/model.gguf':
        // As huggingface.co does: a redirect to the CDN, the file's sha256 on the redirect.
        res.writeHead(302, {
          location: `/cdn/blob?sig=abc`,
          'x-linked-etag': `"${hash}"`,
          'x-linked-size': String(body.length),
        });
        return res.end();
      case '/cdn/blob':
        return serveRange(req, res, { etag: '"cdn-etag-not-a-sha"' });
      case '/loop':
        res.writeHead(302, { location: '/loop' });
        return res.end();
      case '/page.gguf':
        res.writeHead(200, { 'content-type': 'text/html' });
        return res.end('<!DOCTYPE html><html><body>Sign in to continue</body></html>');
      default:
        res.writeHead(404, { 'content-type': 'text/plain' });
        return res.end('not found');
    }
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  return {
    base: `http://127.0.0.1:${port}`,
    body,
    sha256: hash,
    requests,
    get cutAt() {
      return state.cutAt;
    },
    set cutAt(n: number) {
      state.cutAt = n;
      cutsLeft = new Map();
    },
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}
