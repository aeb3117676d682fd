// A team's server instead of the local model: the real sidecar (`leapfrog lsp --stdio
// --endpoint URL`) against HTTP servers on loopback that speak llama.cpp's, Ollama's and
// vLLM's APIs (test/support/endpoint-servers.ts). Each server records what it was sent, so
// the checks see the request shape each kind gets, the ghost text after post-processing,
// the endpoint's state when it goes down and comes back, cancellation reaching the socket,
// streamed chat, and switching between endpoint and local model inside one process.
import { strict as assert } from 'node:assert';
import { spawnSync } from 'node:child_process';
import { createServer } from 'node:net';
import { CancellationTokenSource, ResponseError } from 'vscode-jsonrpc/node';
import type { InlineCompletionList } from 'vscode-languageserver-protocol';
import {
  ChatCancelRequest,
  ChatDeltaNotification,
  ChatRequest,
  ExplainRequest,
  LeapfrogErrorCodes,
  type ChatDeltaParams,
  type StatusResult,
} from '../../engine/protocol';
import { FakeServer, MODEL_IDS, type Recorded } from '../support/endpoint-servers';
import { startServe, type ServeProcess } from '../serve/serve-process';
import {
  cli,
  completeIn,
  delay,
  root,
  settledStatus,
  skipReason,
  startSidecar,
  status,
  testEnv,
  testModel,
  type Sidecar,
} from './sidecar';

const MUL = 'def add(a, b):\n    return a + b\n\ndef mul(a, b):\n    \n\nprint(mul(2, 3))\n';
const MUL_CURSOR = { line: 4, character: 4 };
const HELPERS = 'def square(x):\n    return x * x\n';

let docs = 0;
/** A document name not used before (no typed-ahead answer from an earlier request). */
function freshUri(name = 'main.py'): string {
  return `file:///work/project/${++docs}-${name}`;
}

async function statusWhen(
  s: Sidecar,
  done: (st: StatusResult) => boolean,
  timeoutMs = 20_000,
): Promise<StatusResult> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const st = await status(s);
    if (done(st)) return st;
    if (Date.now() > end) throw new Error(`status never got there: ${JSON.stringify(st)}`);
    await delay(50);
  }
}

function within<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  return Promise.race([
    p,
    delay(ms).then(() => {
      throw new Error(`${what} did not happen within ${ms} ms`);
    }),
  ]);
}

/** A loopback port nothing listens on (it was free a moment ago). */
async function freePort(): Promise<number> {
  const srv = createServer();
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', () => r()));
  const port = (srv.address() as { port: number }).port;
  await new Promise<void>((r) => srv.close(() => r()));
  return port;
}

describe("protocol: a team's server (--endpoint)", function () {
  this.timeout(120_000);
  const running: { sidecars: Sidecar[]; servers: FakeServer[] } = { sidecars: [], servers: [] };

  before(function () {
    const why = skipReason();
    if (why) {
      console.log(`    SKIP protocol suite: ${why}`);
      this.skip();
    }
    // Re-probe a server that is down after 300 ms (not 5 s), so the suite stays quick.
    (testEnv as NodeJS.ProcessEnv).LEAPFROG_ENDPOINT_RETRY_MS = '300';
  });

  afterEach(async () => {
    await Promise.all(running.sidecars.splice(0).map((s) => s.stop()));
    await Promise.all(running.servers.splice(0).map((s) => s.close()));
  });

  after(() => {
    delete (testEnv as NodeJS.ProcessEnv).LEAPFROG_ENDPOINT_RETRY_MS;
  });

  async function server(kind: 'llama.cpp' | 'ollama' | 'vllm', opts = {}): Promise<FakeServer> {
    const s = await FakeServer.start(kind, opts);
    running.servers.push(s);
    return s;
  }

  async function sidecar(args: string[], init: unknown = {}): Promise<Sidecar> {
    const s = await startSidecar(args, init);
    running.sidecars.push(s);
    return s;
  }

  function inline(
    s: Sidecar,
    uri: string,
    position: { line: number; character: number },
    token?: CancellationTokenSource,
  ): Promise<InlineCompletionList> {
    const params = { textDocument: { uri }, position, context: { triggerKind: 2 } };
    // An undefined token would travel as a second, positional parameter.
    return (
      token
        ? s.conn.sendRequest('textDocument/inlineCompletion', params, token.token)
        : s.conn.sendRequest('textDocument/inlineCompletion', params)
    ) as Promise<InlineCompletionList>;
  }

  async function open(s: Sidecar, uri: string, text: string): Promise<void> {
    await s.conn.sendNotification('textDocument/didOpen', {
      textDocument: { uri, languageId: 'python', version: 1, text },
    });
  }

  it('llama.cpp: /infill gets prefix, suffix and the other open file; ghost text is post-processed', async () => {
    const llama = await server('llama.cpp');
    // Healed indentation, then the block's end and a repeat of the line below: cut.
    llama.completion = () => '    return a * b\n\nprint(mul(2, 3))\nprint("again")\n';
    const s = await sidecar(['--endpoint', llama.url]);
    const st = await settledStatus(s);
    assert.equal(st.state, 'ready', JSON.stringify(st));
    assert.equal(st.backend, 'remote');
    assert.equal(st.modelPath, null);
    assert.equal(st.openSessions, 0, 'no local model is loaded');
    assert.deepEqual(
      { ...st.endpoint, url: undefined },
      {
        url: undefined,
        kind: 'llama.cpp',
        completion: 'infill',
        model: MODEL_IDS['llama.cpp'],
        state: 'ok',
      },
    );

    await open(s, 'file:///work/project/helpers.py', HELPERS);
    const text = await completeIn(s, freshUri(), MUL, MUL_CURSOR);
    assert.equal(text, 'return a * b');

    const [req] = llama.to('/infill');
    assert.ok(req, 'the server got POST /infill');
    const body = req.body!;
    // The typed indentation moved from the prompt into the expected output (as locally).
    assert.ok(String(body.input_prefix).endsWith('def mul(a, b):\n'), String(body.input_prefix));
    assert.match(String(body.input_prefix), /^def add\(a, b\):/);
    assert.equal(body.input_suffix, '\n\nprint(mul(2, 3))\n');
    assert.deepEqual(body.input_extra, [{ filename: 'helpers.py', text: HELPERS }]);
    assert.equal(body.stream, true);
    assert.equal(typeof body.n_predict, 'number');
    assert.equal(body.temperature, 0);
    assert.equal(body.model, undefined);
    assert.equal(req.headers.authorization, undefined, 'no key was given');
    assert.deepEqual(
      llama.requests.slice(0, 3).map((r) => `${r.method} ${r.path}`),
      ['GET /v1/models', 'GET /api/version', 'GET /props'],
      'probed with GETs only',
    );
  });

  it('Ollama: /v1/completions with prompt and suffix, for the model /v1/models lists first', async () => {
    const ollama = await server('ollama');
    ollama.completion = () => 'items, rate=0.2)\n    print(total)';
    const s = await sidecar(['--endpoint', `${ollama.url}/v1`]);
    const st = await settledStatus(s);
    assert.equal(st.endpoint?.kind, 'ollama');
    assert.equal(st.endpoint?.completion, 'suffix');
    assert.equal(st.model, MODEL_IDS.ollama);
    assert.equal(st.endpoint?.url, ollama.url, 'a trailing /v1 is the same server');

    const source = 'def cost(items):\n    total = compute()\n    return total\n';
    // Text right of the cursor: one line, and the `)` already there is not repeated.
    const text = await completeIn(s, freshUri(), source, { line: 1, character: 20 });
    assert.equal(text, 'items, rate=0.2');

    const [req] = ollama.to('/v1/completions');
    assert.equal(req.body!.model, MODEL_IDS.ollama);
    assert.equal(req.body!.prompt, 'def cost(items):\n    total = compute(');
    assert.equal(req.body!.suffix, ')\n    return total\n');
    assert.deepEqual(req.body!.stop, ['\n'], 'a single-line completion ends at the newline');
    assert.equal(req.body!.stream, true);
    assert.equal(req.body!.input_prefix, undefined);
  });

  it('vLLM: prefix-only prompting (no suffix), the key as a Bearer header and never in the log', async () => {
    const key = 'sk-team-0123456789';
    const vllm = await server('vllm', { apiKey: key });
    vllm.completion = () => '\n    return f"Hello, {name}"\n\n\nclass Greeter:\n    pass\n';
    const s = await sidecar(['--endpoint', vllm.url, '--api-key', key]);
    const st = await settledStatus(s);
    assert.equal(st.endpoint?.kind, 'openai');
    assert.equal(st.endpoint?.completion, 'prefix');
    assert.equal(st.model, MODEL_IDS.vllm);

    const source = 'import sys\n\ndef greet(name):\n\nprint(greet(sys.argv[1]))\n';
    const text = await completeIn(s, freshUri(), source, { line: 2, character: 16 });
    assert.equal(text, '\n    return f"Hello, {name}"');

    const [req] = vllm.to('/v1/completions');
    assert.equal(req.body!.suffix, undefined, 'vLLM refuses `suffix`');
    assert.equal(req.body!.prompt, 'import sys\n\ndef greet(name):');
    assert.equal(req.body!.model, MODEL_IDS.vllm);
    for (const r of vllm.requests) assert.equal(r.headers.authorization, `Bearer ${key}`, r.path);
    assert.ok(!s.stderr().includes(key), 'the key is not logged');
    assert.ok(!JSON.stringify(await status(s)).includes(key), 'the key is not in status');
  });

  it('a server that refuses the key, then the key pushed in settings: down (401), then up', async () => {
    const vllm = await server('vllm', { apiKey: 'right' });
    const s = await sidecar(['--endpoint', vllm.url], { endpointApiKey: 'wrong' });
    const down = await settledStatus(s);
    assert.equal(down.state, 'error');
    assert.equal(down.endpoint?.state, 'down');
    assert.match(down.endpoint?.message ?? '', /HTTP 401: the server refused the API key/);
    await s.conn.sendNotification('workspace/didChangeConfiguration', {
      settings: { leapfrog: { endpointApiKey: 'right' } },
    });
    const up = await statusWhen(s, (st) => st.endpoint?.state === 'ok');
    assert.equal(up.state, 'ready');
    assert.ok(!s.stderr().includes('right'), 'the key is not logged');
  });

  it('endpoint down: status says why, completions are empty, one log line; up again: it works', async () => {
    const port = await freePort();
    const url = `http://127.0.0.1:${port}`;
    const s = await sidecar(['--endpoint', url]);
    const down = await settledStatus(s);
    assert.equal(down.state, 'error');
    assert.equal(down.backend, 'remote');
    assert.equal(down.endpoint?.state, 'down');
    assert.match(down.endpoint?.message ?? '', /connection refused/);
    assert.match(down.message ?? '', /is down: connection refused/);
    for (let i = 0; i < 5; i++) {
      assert.equal(await completeIn(s, freshUri(), MUL, MUL_CURSOR), '', 'no ghost text');
    }
    await delay(1000); // several re-probes fail meanwhile
    assert.equal(s.stderr().match(/is down/g)?.length, 1, s.stderr());
    assert.doesNotMatch(s.stderr(), /inline completion failed/);

    const ollama = await server('ollama', { port });
    ollama.completion = () => '    return a * b\n';
    await statusWhen(s, (st) => st.endpoint?.state === 'ok');
    assert.equal(await completeIn(s, freshUri(), MUL, MUL_CURSOR), 'return a * b');

    // A server that fails (503): down with its reason; chat gets one clear error.
    ollama.behaviour = 'fail';
    assert.equal(await completeIn(s, freshUri(), MUL, MUL_CURSOR), '');
    const failing = await statusWhen(s, (st) => st.endpoint?.state === 'down');
    assert.match(failing.endpoint?.message ?? '', /HTTP 503: Loading model/);
    await assert.rejects(
      s.conn.sendRequest(ChatRequest, { conversationId: 'down', message: 'hi' }),
      (err: ResponseError<unknown>) =>
        err.code === LeapfrogErrorCodes.GenerationFailed && /is down: HTTP 503/.test(err.message),
    );
    ollama.behaviour = 'ok';
    await statusWhen(s, (st) => st.endpoint?.state === 'ok');
    assert.equal(await completeIn(s, freshUri(), MUL, MUL_CURSOR), 'return a * b');
    assert.equal(s.stderr().match(/is down/g)?.length, 2, 'one line per time it went down');
  });

  it('$/cancelRequest and a superseding request abort the HTTP request (the server sees it close)', async () => {
    const llama = await server('llama.cpp');
    // The first piece (three of the four spaces of the indentation) keeps the completion
    // going; then the server holds the stream open.
    llama.completion = () => '    return a * b\n';
    llama.behaviour = 'hold';
    const s = await sidecar(['--endpoint', llama.url]);
    await settledStatus(s);
    const uri = freshUri();
    await open(s, uri, MUL);

    const cts = new CancellationTokenSource();
    const arrived = llama.nextRequest('/infill');
    const cancelled = inline(s, uri, MUL_CURSOR, cts);
    const first = await within(arrived, 10_000, 'the /infill request');
    cts.cancel();
    await within(llama.closed(first), 5000, 'the socket closing after $/cancelRequest');
    assert.equal(first.closedEarly, true);
    await assert.rejects(cancelled, (err: ResponseError<unknown>) => err.code === -32800);

    const next = llama.nextRequest('/infill');
    const older = inline(s, uri, MUL_CURSOR);
    const held = await within(next, 10_000, 'the second /infill request');
    const newest = llama.nextRequest('/infill');
    const cts2 = new CancellationTokenSource();
    const newer = inline(s, uri, MUL_CURSOR, cts2);
    await within(llama.closed(held), 5000, 'the superseded request closing');
    assert.equal(held.closedEarly, true);
    assert.deepEqual((await older).items, [], 'the superseded request answers with nothing');
    const last: Recorded = await within(newest, 10_000, 'the newest request');
    cts2.cancel();
    await within(llama.closed(last), 5000, 'the newest request closing');
    await newer.catch(() => undefined);
    const st = await statusWhen(s, (x) => x.state === 'ready');
    assert.equal(st.endpoint?.state, 'ok', 'an aborted request does not take the server down');
    assert.ok(st.counters.completionsSuperseded >= 1);
  });

  it('chat and explain stream through /v1/chat/completions as chatDelta; chatCancel closes the stream', async () => {
    const ollama = await server('ollama');
    ollama.chatReply = 'Multiply a by b and return the product.';
    const s = await sidecar(['--endpoint', ollama.url]);
    await settledStatus(s);
    const deltas: ChatDeltaParams[] = [];
    s.conn.onNotification(ChatDeltaNotification, (d) => {
      deltas.push(d);
    });

    const r = await s.conn.sendRequest(ChatRequest, { conversationId: 'c1', message: 'What?' });
    assert.equal(r.text, ollama.chatReply);
    assert.equal(r.finishReason, 'stop');
    const streamed = deltas.filter((d) => d.conversationId === 'c1' && !d.done);
    assert.ok(streamed.length > 3, 'the reply came in several deltas');
    assert.equal(streamed.map((d) => d.delta).join(''), r.text);
    assert.equal(deltas.filter((d) => d.conversationId === 'c1').at(-1)?.done, true);
    const [first] = ollama.to('/v1/chat/completions');
    assert.equal(first.body!.model, MODEL_IDS.ollama);
    assert.equal(first.body!.stream, true);
    const sent = first.body!.messages as { role: string; content: string }[];
    assert.deepEqual(
      sent.map((m) => m.role),
      ['system', 'user'],
    );
    assert.equal(sent[1].content, 'What?');

    await s.conn.sendRequest(ChatRequest, { conversationId: 'c1', message: 'And then?' });
    const second = ollama.to('/v1/chat/completions')[1].body!.messages as { content: string }[];
    assert.deepEqual(
      second.slice(1).map((m) => m.content),
      ['What?', ollama.chatReply, 'And then?'],
      'the conversation is kept',
    );

    const explained = await s.conn.sendRequest(ExplainRequest, {
      conversationId: 'e1',
      selection: 'return a * b',
      fileName: 'main.py',
      languageId: 'python',
    });
    assert.equal(explained.text, ollama.chatReply);

    ollama.behaviour = 'hold';
    const arrived = ollama.nextRequest('/v1/chat/completions');
    const turn = s.conn.sendRequest(ChatRequest, { conversationId: 'c2', message: 'Long one' });
    const held = await within(arrived, 10_000, 'the chat request');
    assert.deepEqual(await s.conn.sendRequest(ChatCancelRequest, { conversationId: 'c2' }), {
      cancelled: true,
    });
    await within(ollama.closed(held), 5000, 'the chat stream closing');
    assert.equal((await turn).finishReason, 'cancelled');
    assert.equal((await status(s)).activeChats, 0);
  });

  it('the endpoint switched off in settings loads the local model in the same process; on again frees it', async () => {
    const ollama = await server('ollama');
    ollama.completion = () => '    return a * b\n';
    const s = await sidecar(['--model', testModel()], { endpoint: ollama.url });
    const remote = await settledStatus(s);
    assert.equal(remote.backend, 'remote');
    assert.equal(remote.openSessions, 0);
    assert.equal(await completeIn(s, freshUri(), MUL, MUL_CURSOR), 'return a * b');
    const pid = s.child.pid;

    await s.conn.sendNotification('workspace/didChangeConfiguration', {
      settings: { leapfrog: { endpoint: '' } },
    });
    const local = await statusWhen(
      s,
      (st) => st.state === 'ready' && st.modelPath !== null,
      60_000,
    );
    assert.equal(local.endpoint, undefined);
    assert.notEqual(local.backend, 'remote');
    assert.equal(local.modelPath, testModel());
    const asked = ollama.to('/v1/completions').length;
    assert.equal(typeof (await completeIn(s, freshUri(), MUL, MUL_CURSOR)), 'string');
    assert.equal(ollama.to('/v1/completions').length, asked, 'the local model answered');

    await s.conn.sendNotification('workspace/didChangeConfiguration', {
      settings: { leapfrog: { endpoint: ollama.url } },
    });
    const back = await statusWhen(s, (st) => st.endpoint?.state === 'ok' && st.openSessions === 0);
    assert.equal(back.modelPath, null, 'the local model was freed');
    assert.equal(await completeIn(s, freshUri(), MUL, MUL_CURSOR), 'return a * b');
    assert.equal(s.child.pid, pid);
    assert.equal(s.child.exitCode, null);
  });

  it('a bad --endpoint is a usage error', () => {
    const r = spawnSync(process.execPath, [cli, 'lsp', '--stdio', '--endpoint', 'ftp://x'], {
      cwd: root,
      encoding: 'utf8',
      input: '',
    });
    assert.equal(r.status, 2);
    assert.match(r.stderr, /^leapfrog: error: --endpoint: endpoint ftp:\/\/x: only http/);
  });
});

// Leapfrog's own `leapfrog serve` as the team's server: probed as `leapfrog`, asked through
// /infill, and (greedy decoding of the same model from the same prompt) the ghost text is
// the one the local model gives in a sidecar of its own.
describe("protocol: Leapfrog's own serve as the endpoint", function () {
  this.timeout(180_000);
  let serve: ServeProcess | undefined;
  const sidecars: Sidecar[] = [];

  before(async function () {
    const why = skipReason();
    if (why) {
      console.log(`    SKIP protocol suite: ${why}`);
      this.skip();
    }
    serve = await startServe();
  });

  after(async () => {
    await Promise.all(sidecars.map((s) => s.stop()));
    await serve?.stop();
  });

  it('completes through /infill with the same text as the local model', async () => {
    const line = '    total = compute_total(items, discount=0.25, tax_rate=0.08, currency="EUR")';
    const source = `def report(items):\n${Array.from({ length: 6 }, () => line).join('\n')}\n    \n`;
    const cursor = { line: 7, character: 4 };
    const remote = await startSidecar(['--endpoint', serve!.url]);
    sidecars.push(remote);
    const st = await settledStatus(remote);
    assert.equal(st.state, 'ready', JSON.stringify(st));
    assert.equal(st.endpoint?.kind, 'leapfrog');
    assert.equal(st.endpoint?.completion, 'infill');
    assert.ok(st.model, 'the served model is named');
    const local = await startSidecar(['--model', testModel()]);
    sidecars.push(local);
    assert.equal((await settledStatus(local)).state, 'ready');

    const viaServe = await completeIn(remote, freshUri(), source, cursor);
    const viaLocal = await completeIn(local, freshUri(), source, cursor);
    assert.match(viaServe, /compute_total/);
    assert.equal(viaServe, viaLocal);
    const after = await status(remote);
    assert.equal(after.endpoint?.completion, 'infill', 'no fallback from /infill was needed');
    assert.equal(after.counters.completions, 1);
  });
});
