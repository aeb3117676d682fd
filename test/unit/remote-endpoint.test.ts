// The endpoint's state machine and requests, against servers on loopback: down → re-probed
// with backoff → ok, one log line per change of state, a refused request form falls back
// (llama.cpp without FIM tokens: /infill → prefix; Ollama's "does not support insert":
// suffix → prefix) and the same completion is answered, and dispose stops what is in flight.
import { strict as assert } from 'node:assert';
import { createServer } from 'node:net';
import { RemoteEndpoint } from '../../engine/remote/endpoint';
import type { RemoteSampling } from '../../engine/remote/completion-api';
import type { LogLevel } from '../../engine/server/log';
import { FakeServer, MODEL_IDS } from '../support/endpoint-servers';

const SAMPLING: RemoteSampling = {
  maxTokens: 16,
  temperature: 0,
  topK: 40,
  topP: 0.95,
  seed: 0,
  stop: [],
};
const PROMPT = { prefix: 'def f():\n', suffix: '\n', extra: [] };

async function freePort(): Promise<number> {
  const srv = createServer();
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', () => r()));
  const port = (srv.address() as { port: number }).port;
  await new Promise<void>((r) => srv.close(() => r()));
  return port;
}

function delay(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}

describe('remote: the endpoint', () => {
  const servers: FakeServer[] = [];
  const endpoints: RemoteEndpoint[] = [];
  const lines: { level: LogLevel; message: string }[] = [];
  afterEach(async () => {
    for (const e of endpoints.splice(0)) e.dispose();
    await Promise.all(servers.splice(0).map((s) => s.close()));
    lines.length = 0;
  });

  async function server(...args: Parameters<typeof FakeServer.start>): Promise<FakeServer> {
    const s = await FakeServer.start(...args);
    servers.push(s);
    return s;
  }

  function endpoint(url: string, more: { model?: string; apiKey?: string } = {}): RemoteEndpoint {
    const e = new RemoteEndpoint(
      { url, ...more },
      { retryMs: 100, log: (level, message) => lines.push({ level, message }) },
    );
    endpoints.push(e);
    e.start();
    return e;
  }

  async function complete(e: RemoteEndpoint): Promise<{ text: string; failed: boolean }> {
    let text = '';
    const h = e.complete(PROMPT, SAMPLING, (t) => (text += t));
    await h.done;
    return { text, failed: h.failed };
  }

  it('probing → ok: status names kind, mode and model; a completion streams the text', async () => {
    const s = await server('ollama');
    s.completion = () => '    return 42\n';
    const e = endpoint(`${s.url}/v1`);
    assert.equal(e.status().state, 'probing');
    assert.ok(await e.ready());
    assert.deepEqual(e.status(), {
      url: s.url,
      kind: 'ollama',
      completion: 'suffix',
      model: MODEL_IDS.ollama,
      state: 'ok',
    });
    assert.deepEqual(await complete(e), { text: '    return 42\n', failed: false });
    assert.equal(lines.length, 1);
    assert.match(
      lines[0].message,
      /ollama, model .*, completions by \/v1\/completions with suffix/,
    );
  });

  it('down, re-probed with backoff, up: one log line for each change, not for each retry', async () => {
    const port = await freePort();
    const e = endpoint(`http://127.0.0.1:${port}`);
    assert.equal(await e.ready(), undefined);
    assert.equal(e.status().state, 'down');
    assert.match(e.status().message ?? '', /connection refused/);
    assert.deepEqual(await complete(e), { text: '', failed: true }, 'no request while down');
    await delay(700); // retries at 100, 200, 400 ms
    assert.equal(lines.filter((l) => /is down/.test(l.message)).length, 1);
    const s = await server('llama.cpp', { port });
    const deadline = Date.now() + 5000;
    while (e.status().state !== 'ok' && Date.now() < deadline) await delay(20);
    assert.equal(e.status().state, 'ok');
    assert.equal(e.status().kind, 'llama.cpp');
    assert.deepEqual(await complete(e), { text: 'x = 1', failed: false });
    assert.equal(lines.length, 2, lines.map((l) => l.message).join('\n'));

    // A server that starts failing mid-way is down again (and logged once more).
    s.behaviour = 'fail';
    assert.deepEqual(await complete(e), { text: '', failed: true });
    assert.equal(e.status().state, 'down');
    assert.match(e.status().message ?? '', /HTTP 503: Loading model/);
    assert.equal(lines.filter((l) => /is down/.test(l.message)).length, 2);
  });

  it('llama.cpp whose model has no FIM tokens: /infill 501 → /v1/completions, prefix only, same request answered', async () => {
    const s = await server('llama.cpp', { noFim: true });
    const e = endpoint(s.url);
    await e.ready();
    assert.deepEqual(await complete(e), { text: 'x = 1', failed: false });
    assert.equal(e.status().completion, 'prefix');
    const [fallback] = s.to('/v1/completions');
    assert.equal(fallback.body!.prompt, PROMPT.prefix);
    assert.equal(fallback.body!.suffix, undefined);
    assert.equal(s.to('/infill').length, 1, 'asked once, then not again');
    await complete(e);
    assert.equal(s.to('/infill').length, 1);
    assert.ok(
      lines.some((l) => /\/infill refused \(HTTP 501: Infill is not supported/.test(l.message)),
    );
  });

  it('Ollama "does not support insert": suffix → prefix only', async () => {
    const s = await server('ollama', { noFim: true });
    const e = endpoint(s.url);
    await e.ready();
    assert.deepEqual(await complete(e), { text: 'x = 1', failed: false });
    assert.equal(e.status().completion, 'prefix');
    assert.equal(e.status().state, 'ok');
  });

  it('a model that is not there (404 from Ollama) takes the endpoint down with the reason', async () => {
    const s = await server('ollama');
    const e = endpoint(s.url);
    await e.ready();
    // The server lost the model after the probe (someone ran `ollama rm`).
    (e.current as { model?: string }).model = 'gone:latest';
    assert.deepEqual(await complete(e), { text: '', failed: true });
    assert.match(e.status().message ?? '', /HTTP 404: model "gone:latest" not found/);
  });

  it('abort and dispose close the request; the endpoint stays ok after an abort', async () => {
    const s = await server('llama.cpp');
    s.behaviour = 'hold';
    const e = endpoint(s.url);
    await e.ready();
    const arrived = s.nextRequest('/infill');
    const h = e.complete(PROMPT, SAMPLING, () => {});
    const rec = await arrived;
    h.abort();
    const stats = await h.done;
    assert.equal(stats.aborted, true);
    assert.equal(h.failed, false);
    await s.closed(rec);
    assert.equal(rec.closedEarly, true);
    assert.equal(e.status().state, 'ok');

    const again = s.nextRequest('/v1/chat/completions');
    const chat = e.chat(
      [{ role: 'user', content: 'hi' }],
      { maxTokens: 8, temperature: 0, seed: 0 },
      () => {},
      new AbortController().signal,
    );
    const held = await again;
    e.dispose();
    await s.closed(held);
    assert.equal(held.closedEarly, true);
    await chat.catch(() => undefined);
  });

  it('chat: streams the reply, stops when asked to, and throws a clear error while down', async () => {
    const s = await server('vllm');
    s.chatReply = 'One. Two. Three.';
    const e = endpoint(s.url);
    await e.ready();
    let got = '';
    const r = await e.chat(
      [{ role: 'user', content: 'count' }],
      { maxTokens: 8, temperature: 0, seed: 0 },
      (t) => {
        got += t;
      },
      new AbortController().signal,
    );
    assert.equal(got, s.chatReply);
    assert.equal(r.finishReason, 'stop');
    let partial = '';
    await e.chat(
      [{ role: 'user', content: 'count' }],
      { maxTokens: 8, temperature: 0, seed: 0 },
      (t) => {
        partial += t;
        return partial.length < 6;
      },
      new AbortController().signal,
    );
    assert.ok(partial.length >= 6 && partial.length < s.chatReply.length, partial);
    s.behaviour = 'fail';
    await assert.rejects(
      e.chat(
        [{ role: 'user', content: 'x' }],
        { maxTokens: 8, temperature: 0, seed: 0 },
        () => {},
        new AbortController().signal,
      ),
      /HTTP 503/,
    );
    await assert.rejects(
      e.chat(
        [{ role: 'user', content: 'x' }],
        { maxTokens: 8, temperature: 0, seed: 0 },
        () => {},
        new AbortController().signal,
      ),
      /is down: HTTP 503/,
    );
  });

  it('a setting that is no URL is down with the reason, and is not retried', async () => {
    const e = endpoint('gpu-box:8000');
    assert.equal(await e.ready(), undefined);
    assert.equal(e.status().state, 'down');
    assert.match(e.status().message ?? '', /is not a URL/);
    await delay(300);
    assert.equal(lines.length, 1);
  });
});
