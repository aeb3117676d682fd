// `leapfrog serve --parallel 2`: several clients at once are all answered, each with what it
// gets alone (greedy decoding); at most two generate at a time, the rest wait their turn; a
// client that disconnects cancels its work, running or queued, and the server goes on.
import assert from 'node:assert/strict';
import { skipBecause } from '../support/paths';
import {
  delay,
  health,
  postJson,
  skipReason,
  startServe,
  waitIdle,
  type ServeProcess,
} from './serve-process';

const PROMPTS = [
  'def fibonacci(n):',
  'import os\n\n\ndef list_python_files(root):\n',
  'class Stack:\n    def __init__(self):\n',
  'export function debounce(fn, ms) {\n',
  'SELECT name FROM users WHERE',
];
/** Long enough that a request still runs when the next one arrives. */
const LONG = 1500;

async function complete(url: string, prompt: string, maxTokens = 96): Promise<string> {
  const { status, json } = await postJson(`${url}/v1/completions`, {
    prompt,
    max_tokens: maxTokens,
    temperature: 0,
  });
  assert.equal(status, 200, JSON.stringify(json));
  return (json.choices as { text: string }[])[0].text;
}

/** Starts a streaming completion and resolves once its first text arrived. */
async function startStream(url: string, maxTokens = LONG): Promise<AbortController> {
  const abort = new AbortController();
  const r = await fetch(`${url}/v1/completions`, {
    method: 'POST',
    body: JSON.stringify({ prompt: 'def fibonacci(n):', max_tokens: maxTokens, stream: true }),
    signal: abort.signal,
  });
  assert.equal(r.status, 200);
  const reader = r.body!.getReader();
  const first = await reader.read();
  assert.ok(!first.done);
  void reader.read().catch(() => undefined); // keep the stream flowing until it is cut
  return abort;
}

function logLines(server: ServeProcess, pattern: RegExp): string[] {
  return server
    .stderr()
    .split('\n')
    .filter((l) => pattern.test(l));
}

describe('leapfrog serve --parallel 2', function () {
  this.timeout(300_000);
  let server: ServeProcess;

  before(async function () {
    const why = skipReason();
    if (why) skipBecause(this, why);
    server = await startServe(['--parallel', '2']);
  });

  after(async () => {
    if (server) assert.equal(await server.stop(), 0, `unclean exit; stderr:\n${server.stderr()}`);
  });

  it('answers five clients at once exactly as it answers each alone', async () => {
    assert.equal((await health(server.url)).slots_idle, 2);
    const alone: string[] = [];
    for (const p of PROMPTS) alone.push(await complete(server.url, p));
    let mostBusy = 0;
    let mostQueued = 0;
    let polling = true;
    const poll = (async () => {
      while (polling) {
        const h = await health(server.url);
        mostBusy = Math.max(mostBusy, h.slots_processing);
        mostQueued = Math.max(mostQueued, h.requests_queued);
        await delay(5);
      }
    })();
    const together = await Promise.all(PROMPTS.map((p) => complete(server.url, p)));
    polling = false;
    await poll;
    assert.deepEqual(together, alone);
    assert.equal(mostBusy, 2, 'never two generations at once');
    assert.ok(mostQueued >= 1, 'nothing ever waited: the requests did not overlap');
  });

  it('cancels a running generation when its streaming client disconnects', async () => {
    const abort = await startStream(server.url);
    assert.equal((await health(server.url)).slots_processing, 1);
    abort.abort();
    const idleAfter = await waitIdle(server.url, 5000);
    assert.ok(idleAfter < 2000, `still generating ${idleAfter} ms after the client left`);
    await delay(50); // the log line follows the cancellation
    const [line] = logLines(server, /POST \/v1\/completions .*cancelled after \d+ tokens/);
    assert.ok(line, `no cancellation logged:\n${server.stderr()}`);
    const generated = Number(/cancelled after (\d+) tokens/.exec(line)![1]);
    assert.ok(generated < LONG, line);
    // And the next request is served normally.
    assert.equal(
      await complete(server.url, PROMPTS[0], 8),
      await complete(server.url, PROMPTS[0], 8),
    );
    assert.equal((await health(server.url)).status, 'ok');
  });

  it('drops a queued request whose client disconnects before it ran', async () => {
    const running = [await startStream(server.url), await startStream(server.url)];
    assert.equal((await health(server.url)).slots_processing, 2);
    const queued = new AbortController();
    const waiting = fetch(`${server.url}/v1/completions`, {
      method: 'POST',
      body: JSON.stringify({ prompt: 'import sys', max_tokens: 8 }),
      signal: queued.signal,
    }).catch((e: Error) => e);
    for (let i = 0; i < 100 && (await health(server.url)).requests_queued === 0; i++)
      await delay(10);
    assert.equal((await health(server.url)).requests_queued, 1);
    queued.abort();
    assert.ok((await waiting) instanceof Error);
    for (let i = 0; i < 100 && (await health(server.url)).requests_queued > 0; i++) await delay(10);
    assert.equal((await health(server.url)).requests_queued, 0);
    assert.equal((await health(server.url)).slots_processing, 2, 'a running job was hit');
    for (const a of running) a.abort();
    await waitIdle(server.url, 5000);
    await delay(50);
    assert.equal(logLines(server, /cancelled while queued/).length, 1, server.stderr());
    assert.equal(
      await complete(server.url, 'import sys', 8),
      await complete(server.url, 'import sys', 8),
    );
  });

  it('shuts down cleanly on SIGTERM while a client streams', async () => {
    const abort = await startStream(server.url);
    const code = await server.stop();
    abort.abort();
    assert.equal(code, 0, server.stderr());
    assert.match(server.stderr(), /SIGTERM: shutting down[\s\S]*stopped/);
  });
});
