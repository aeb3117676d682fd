// `leapfrog serve` over plain HTTP (fetch): /health, llama.cpp's /infill (whole and streamed),
// /v1/completions with `suffix`, and the error contract — 400 with an OpenAI-style body,
// 401 without the key, 404, 405, 413 — after all of which the server still answers.
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { runCli, runCliJson } from '../support/run-cli';
import { skipBecause } from '../support/paths';
import {
  health,
  postJson,
  readEvents,
  skipReason,
  startServe,
  testModel,
  THREADS,
  type ServeProcess,
} from './serve-process';

const FILE =
  'import os\n\n\ndef list_python_files(root):\n    result = []\n' +
  '    for name in os.listdir(root):\n\n\nprint(list_python_files("."))\n';
const CURSOR = { line: 5, character: '    for name in os.listdir(root):'.length };

/** postprocess trims trailing blanks of every line; compare raw text the same way. */
function trimLineEnds(s: string): string {
  return s.replace(/[ \t]+$/gm, '');
}

function offsetOf(text: string, line: number, character: number): number {
  return text.split('\n').slice(0, line).join('\n').length + (line > 0 ? 1 : 0) + character;
}

describe('leapfrog serve over HTTP', function () {
  this.timeout(180_000);
  let server: ServeProcess;

  before(async function () {
    const why = skipReason();
    if (why) skipBecause(this, why);
    server = await startServe();
  });

  after(async () => {
    if (server) assert.equal(await server.stop(), 0, `unclean exit; stderr:\n${server.stderr()}`);
  });

  it('GET /health says ok with the slots', async () => {
    const r = await fetch(`${server.url}/health`);
    assert.equal(r.status, 200);
    assert.deepEqual(await r.json(), {
      status: 'ok',
      slots_idle: 1,
      slots_processing: 0,
      requests_queued: 0,
    });
  });

  it('/infill gives the ghost text `leapfrog complete` shows, before post-processing', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'leapfrog-serve-'));
    const file = join(dir, 'calc.py');
    writeFileSync(file, FILE);
    process.env.LEAPFROG_COMPLETION_TIME_BUDGET_MS = '0';
    const complete = await runCliJson<{ text: string }>([
      'complete',
      '--model',
      testModel(),
      '--threads',
      THREADS,
      '--file',
      file,
      '--line',
      String(CURSOR.line),
      '--character',
      String(CURSOR.character),
    ]);
    const at = offsetOf(FILE, CURSOR.line, CURSOR.character);
    const { status, json } = await postJson(`${server.url}/infill`, {
      input_prefix: FILE.slice(0, at),
      input_suffix: FILE.slice(at),
      input_extra: [{ filename: 'util.py', text: 'def sub(a, b):\n    return a - b\n' }],
      n_predict: 128,
    });
    assert.equal(status, 200, JSON.stringify(json));
    const content = json.content as string;
    assert.ok(complete.text.length > 0, 'complete gave no text: nothing to compare');
    // The ghost text is the raw text cut by post-processing: a prefix of it.
    assert.ok(
      trimLineEnds(content).startsWith(complete.text),
      `complete: ${JSON.stringify(complete.text)}\ninfill: ${JSON.stringify(content)}`,
    );
    assert.equal(json.stop, true);
    assert.equal(typeof json.tokens_predicted, 'number');
    assert.equal(typeof (json.timings as Record<string, number>).predicted_n, 'number');

    // The same through /v1/completions with `suffix` (as Ollama takes it).
    const v1 = await postJson(`${server.url}/v1/completions`, {
      prompt: FILE.slice(0, at),
      suffix: FILE.slice(at),
      max_tokens: 128,
    });
    assert.equal(v1.status, 200, JSON.stringify(v1.json));
    assert.equal((v1.json.choices as { text: string }[])[0].text, content);
  });

  it('/infill streams llama.cpp-style events ending with stop: true', async () => {
    const body = { input_prefix: 'def fibonacci(n):\n', input_suffix: '', n_predict: 32 };
    const whole = await postJson(`${server.url}/infill`, body);
    const r = await fetch(`${server.url}/infill`, {
      method: 'POST',
      body: JSON.stringify({ ...body, stream: true }),
    });
    assert.equal(r.status, 200);
    assert.match(r.headers.get('content-type') ?? '', /^text\/event-stream/);
    const events = (await readEvents(r)).map((e) => JSON.parse(e) as Record<string, unknown>);
    assert.ok(events.length > 2);
    const last = events[events.length - 1];
    assert.equal(last.stop, true);
    assert.equal(last.tokens_predicted, 32);
    assert.ok(events.slice(0, -1).every((e) => e.stop === false));
    assert.equal(events.map((e) => e.content).join(''), whole.json.content);
  });

  it('streams /v1/completions as data: {...} events ending in data: [DONE]', async () => {
    const r = await fetch(`${server.url}/v1/completions`, {
      method: 'POST',
      body: JSON.stringify({ prompt: 'import os\n', max_tokens: 8, stream: true }),
    });
    const raw = await r.clone().text();
    assert.match(raw, /^(data: \{.*\}\n\n)+data: \[DONE\]\n\n$/s);
    const events = await readEvents(r);
    assert.equal(events[events.length - 1], '[DONE]');
  });

  const errorCases: [string, string, unknown, number, RegExp, string | null][] = [
    ['invalid JSON', '/v1/completions', '{"prompt": ', 400, /not valid JSON/, null],
    ['a body that is not an object', '/v1/chat/completions', '[1, 2]', 400, /JSON object/, null],
    [
      'a wrong type',
      '/v1/completions',
      { prompt: 'x', temperature: 'hot' },
      400,
      /number/,
      'temperature',
    ],
    ['out of range', '/v1/completions', { prompt: 'x', top_p: 3 }, 400, /≤ 1/, 'top_p'],
    ['no prompt', '/v1/completions', { max_tokens: 3 }, 400, /required/, 'prompt'],
    ['bad token ids', '/v1/completions', { prompt: [1, -4] }, 400, /token ids/, 'prompt'],
    ['n > 1', '/v1/completions', { prompt: 'x', n: 2 }, 400, /'n'/, 'n'],
    ['no messages', '/v1/chat/completions', { messages: [] }, 400, /non-empty/, 'messages'],
    [
      'a bad role',
      '/v1/chat/completions',
      { messages: [{ role: 'wizard', content: 'hi' }] },
      400,
      /role/,
      'messages[0].role',
    ],
    ['a bad stop', '/v1/completions', { prompt: 'x', stop: [1] }, 400, /stop/, 'stop'],
    [
      'bad input_extra',
      '/infill',
      { input_prefix: 'x', input_extra: [{ t: 1 }] },
      400,
      /input_extra/,
      'input_extra[0]',
    ],
    [
      'max_tokens beyond the context',
      '/v1/completions',
      { prompt: 'def f():', max_tokens: 100_000 },
      400,
      /exceeds the model's context of 2048/,
      'max_tokens',
    ],
  ];
  for (const [what, path, body, status, message, param] of errorCases) {
    it(`answers ${what} with ${status} and an OpenAI error body`, async () => {
      const r = await postJson(`${server.url}${path}`, body);
      assert.equal(r.status, status, JSON.stringify(r.json));
      const err = r.json.error as Record<string, unknown>;
      assert.match(err.message as string, message);
      assert.equal(err.type, 'invalid_request_error');
      assert.equal(err.param, param);
      assert.ok('code' in err);
    });
  }

  it('answers a prompt longer than the context with 400 context_length_exceeded', async () => {
    for (const path of ['/v1/completions', '/v1/chat/completions']) {
      const long = 'x = 1\n'.repeat(3000);
      const body =
        path === '/v1/completions'
          ? { prompt: long }
          : { messages: [{ role: 'user', content: long }] };
      const r = await postJson(`${server.url}${path}`, body);
      assert.equal(r.status, 400);
      const err = r.json.error as Record<string, string>;
      assert.equal(err.code, 'context_length_exceeded');
      assert.match(err.message, /the prompt is \d+ tokens, more than the model's context of 2048/);
    }
    // /infill fits a long prefix to the context instead, as llama.cpp does, and says so.
    const r = await postJson(`${server.url}/infill`, {
      input_prefix: 'x = 1\n'.repeat(3000),
      n_predict: 8,
    });
    assert.equal(r.status, 200, JSON.stringify(r.json));
    assert.equal(r.json.truncated, true);
    assert.ok((r.json.tokens_evaluated as number) <= 2048 - 8);
  });

  it('answers unknown routes 404 and wrong methods 405', async () => {
    const missing = await fetch(`${server.url}/v1/embeddings`, { method: 'POST', body: '{}' });
    assert.equal(missing.status, 404);
    assert.match(
      ((await missing.json()) as { error: { message: string } }).error.message,
      /no route/,
    );
    const wrong = await fetch(`${server.url}/v1/completions`);
    assert.equal(wrong.status, 405);
    assert.equal(wrong.headers.get('allow'), 'POST');
    assert.equal(
      ((await wrong.json()) as { error: { type: string } }).error.type,
      'invalid_request_error',
    );
    const model = await fetch(`${server.url}/v1/models/nope`);
    assert.equal(model.status, 404);
  });

  it('answers a body over 4 MiB with 413, and keeps serving', async () => {
    const big = JSON.stringify({ prompt: 'a'.repeat(5 * 1024 * 1024) });
    const r = await fetch(`${server.url}/v1/completions`, { method: 'POST', body: big });
    assert.equal(r.status, 413);
    assert.equal(((await r.json()) as { error: { code: string } }).error.code, 'request_too_large');
    assert.equal((await health(server.url)).status, 'ok');
  });

  it('survives garbage on the socket and still answers', async () => {
    const { connect } = await import('node:net');
    const { port, hostname } = new URL(server.url);
    await new Promise<void>((resolve) => {
      const s = connect(Number(port), hostname, () => s.end('NOT HTTP AT ALL\r\n\r\n'));
      s.on('close', () => resolve());
      s.on('error', () => resolve());
      s.resume();
    });
    const r = await postJson(`${server.url}/v1/completions`, { prompt: 'x', max_tokens: 2 });
    assert.equal(r.status, 200);
  });
});

describe('leapfrog serve with --api-key', function () {
  this.timeout(120_000);
  let server: ServeProcess;
  const KEY = 'sekrit-test-key';

  before(async function () {
    const why = skipReason();
    if (why) skipBecause(this, why);
    server = await startServe(['--api-key', KEY, '--host', '127.0.0.1']);
  });

  after(async () => {
    if (server) assert.equal(await server.stop(), 0, `unclean exit; stderr:\n${server.stderr()}`);
  });

  it('answers /v1 and /infill 401 without the key, and serves with it', async () => {
    for (const [path, body] of [
      ['/v1/completions', { prompt: 'x', max_tokens: 2 }],
      ['/infill', { input_prefix: 'x', n_predict: 2 }],
    ] as const) {
      for (const auth of [undefined, 'Bearer wrong', `Basic ${KEY}`]) {
        const r = await postJson(`${server.url}${path}`, body, auth ? { Authorization: auth } : {});
        assert.equal(r.status, 401, `${path} with ${auth}`);
        const err = r.json.error as Record<string, string>;
        assert.equal(err.code, 'invalid_api_key');
        assert.equal(err.type, 'invalid_request_error');
      }
      const ok = await postJson(`${server.url}${path}`, body, { Authorization: `Bearer ${KEY}` });
      assert.equal(ok.status, 200, JSON.stringify(ok.json));
    }
    const models = await fetch(`${server.url}/v1/models`);
    assert.equal(models.status, 401);
    // /health stays open for load balancers and probes.
    assert.equal((await fetch(`${server.url}/health`)).status, 200);
  });
});

describe('leapfrog serve usage errors', function () {
  this.timeout(60_000);
  before(function () {
    const why = skipReason();
    if (why) skipBecause(this, why);
  });

  it('refuses a non-loopback host without --api-key (exit 2)', async () => {
    const r = await runCli(['serve', '--host', '0.0.0.0', '--port', '0', '--model', testModel()]);
    assert.equal(r.code, 2);
    assert.match(r.stderr, /^leapfrog: error: --host 0\.0\.0\.0 .*--api-key/);
    assert.equal(r.stdout, '');
  });

  it('refuses a missing model before listening (exit 1)', async () => {
    const missing = join(tmpdir(), `${basename(testModel())}-missing.gguf`);
    const r = await runCli(['serve', '--port', '0', '--model', missing]);
    assert.equal(r.code, 1);
    assert.match(r.stderr, /^leapfrog: error: .*model file not found/);
    assert.equal(r.stdout, '');
  });

  it('exits 1 with the reason when the model fails to load after listening', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'leapfrog-serve-bad-'));
    const bad = join(dir, 'corrupt.gguf');
    writeFileSync(
      bad,
      Buffer.concat([Buffer.from('GGUF\x03\x00\x00\x00'), Buffer.alloc(200, 0xff)]),
    );
    const r = await runCli(['serve', '--port', '0', '--model', bad]);
    assert.equal(r.code, 1);
    assert.match(r.stdout, /^leapfrog: serving http:\/\/127\.0\.0\.1:\d+\n$/);
    assert.match(r.stderr, /leapfrog: error: .*corrupt\.gguf: .*corrupt/);
  });

  it('refuses bad numbers (exit 2)', async () => {
    for (const args of [
      ['--port', '70000'],
      ['--parallel', '0'],
      ['--ctx', 'big'],
    ]) {
      const r = await runCli(['serve', ...args, '--model', testModel()]);
      assert.equal(r.code, 2, `${args.join(' ')}: ${r.stderr}`);
      assert.match(r.stderr, /^leapfrog: error: /);
    }
  });
});
