// The sidecar's requests behind VS Code's Language Model API, over the real sidecar: a
// whole message list answered like the same conversation held by the server, streamed
// and cancellable, remembered by nobody; the loaded model's chat limits; token counts
// equal to `leapfrog tokenize`; and extension/lm's provider driving all of it through a
// plain JSON-RPC connection, as it drives the LanguageClient inside VS Code.
import { strict as assert } from 'node:assert';
import { CancellationTokenSource } from 'vscode-jsonrpc/node';
import type { LanguageModelTextPart } from 'vscode';
import {
  ChatDeltaNotification,
  ChatMessagesRequest,
  ChatModelRequest,
  ChatRequest,
  CountTokensRequest,
  type ChatDeltaParams,
  type ChatMessage,
} from '../../engine/protocol';
import { connectionEngine } from '../../extension/lm/engine-port';
import { LeapfrogChatProvider, modelInformation } from '../../extension/lm/provider';
import { runCliJson } from '../support/run-cli';
import {
  settledStatus,
  skipReason,
  startSidecar,
  status,
  testModel,
  type Sidecar,
} from './sidecar';

describe('protocol: stateless chat, chat model and token counts (Language Model API)', function () {
  this.timeout(120_000);
  let s: Sidecar;
  const deltas = new Map<string, ChatDeltaParams[]>();
  const listeners = new Set<(d: ChatDeltaParams) => void>();

  before(async function () {
    const why = skipReason();
    if (why) {
      console.log(`    SKIP protocol suite: ${why}`);
      this.skip();
    }
    s = await startSidecar();
    s.conn.onNotification(ChatDeltaNotification, (d) => {
      deltas.set(d.conversationId, [...(deltas.get(d.conversationId) ?? []), d]);
      for (const l of listeners) l(d);
    });
    assert.equal((await settledStatus(s)).state, 'ready', s.stderr());
  });

  after(async () => {
    await s?.stop();
  });

  const streamed = (id: string) =>
    (deltas.get(id) ?? [])
      .filter((d) => !d.done)
      .map((d) => d.delta)
      .join('');
  const SYSTEM = 'You are a storyteller.';

  it('answers a message list exactly as the same conversation held by the server', async () => {
    const turn = (message: string) =>
      s.conn.sendRequest(ChatRequest, {
        conversationId: 'held',
        message,
        system: SYSTEM,
        maxTokens: 12,
        temperature: 0,
      });
    const first = await turn('Once upon a time');
    const second = await turn('And then?');
    const messages: ChatMessage[] = [
      { role: 'system', content: SYSTEM },
      { role: 'user', content: 'Once upon a time' },
      { role: 'assistant', content: first.text },
      { role: 'user', content: 'And then?' },
    ];
    const r = await s.conn.sendRequest(ChatMessagesRequest, {
      requestId: 'lm-1',
      messages,
      maxTokens: 12,
      temperature: 0,
    });
    assert.equal(r.conversationId, 'lm-1');
    assert.equal(r.text, second.text, 'same prompt, same greedy reply');
    assert.equal(r.stats.promptTokens, second.stats.promptTokens);
    assert.equal(streamed('lm-1'), r.text, 'the deltas add up to the reply');
    assert.equal(deltas.get('lm-1')!.at(-1)!.done, true);
  });

  it('remembers nothing: the same list twice is the same prompt', async () => {
    const messages: ChatMessage[] = [{ role: 'user', content: 'Tell me about a dog' }];
    const a = await s.conn.sendRequest(ChatMessagesRequest, {
      requestId: 'lm-2',
      messages,
      maxTokens: 8,
      temperature: 0,
    });
    const b = await s.conn.sendRequest(ChatMessagesRequest, {
      requestId: 'lm-2',
      messages,
      maxTokens: 8,
      temperature: 0,
    });
    assert.equal(b.stats.promptTokens, a.stats.promptTokens);
    assert.equal(b.text, a.text);
    assert.equal((await status(s)).activeChats, 0);
  });

  it('cancels ($/cancelRequest) and keeps serving', async () => {
    const reasons: string[] = [];
    for (let i = 0; i < 10 && !reasons.includes('cancelled'); i++) {
      const cts = new CancellationTokenSource();
      const p = s.conn.sendRequest(
        ChatMessagesRequest,
        {
          requestId: `lm-cancel-${i}`,
          messages: [{ role: 'user', content: 'Write a long story' }],
          maxTokens: 4096,
        },
        cts.token,
      );
      cts.cancel();
      const r = await p;
      reasons.push(r.finishReason);
    }
    assert.ok(reasons.includes('cancelled'), reasons.join(', '));
    const st = await status(s);
    assert.equal(st.activeChats, 0);
    assert.equal(st.activeGenerations, 0);
  });

  it('bad message lists: InvalidParams with the reason', async () => {
    const bad = async (messages: unknown, why: RegExp) =>
      assert.rejects(
        s.conn.sendRequest(ChatMessagesRequest, { requestId: 'bad', messages } as never),
        (e: { code: number; message: string }) => e.code === -32602 && why.test(e.message),
      );
    await bad([], /non-empty array/);
    await bad('hello', /non-empty array/);
    await bad(
      [
        { role: 'user', content: 'q' },
        { role: 'assistant', content: 'a' },
      ],
      /last message must be the user/,
    );
    await bad([{ role: 'tool', content: 'x' }], /messages\[0\] must be/);
    await bad([{ role: 'user', content: 3 }], /messages\[0\] must be/);
    await bad(
      [{ role: 'system', content: 'only a system prompt' }],
      /last message must be the user/,
    );
  });

  it('describes the loaded model with its chat limits', async () => {
    const { model } = await s.conn.sendRequest(ChatModelRequest);
    assert.ok(model);
    const st = await status(s);
    assert.equal(model.path, st.modelPath);
    assert.equal(model.name, st.model);
    assert.ok(model.contextSize >= 256, `context ${model.contextSize}`);
    assert.ok(model.defaultMaxTokens <= model.maxOutputTokens);
    assert.ok(model.maxOutputTokens <= model.contextSize / 2);
    assert.ok(model.architecture);
  });

  it('counts tokens as `leapfrog tokenize` does', async () => {
    const text = 'def fib(n):\n    return n if n < 2 else fib(n - 1) + fib(n - 2)\n';
    const { tokens } = await s.conn.sendRequest(CountTokensRequest, { text });
    const cli = await runCliJson<{ tokens: number[] }>([
      'tokenize',
      '--model',
      testModel(),
      '--text',
      text,
    ]);
    assert.equal(tokens, cli.tokens.length);
    assert.ok(tokens > 5);
  });

  it("extension/lm's provider streams the same reply through the real sidecar", async () => {
    const engine = connectionEngine(
      () => s.conn,
      (l) => {
        listeners.add(l);
        return { dispose: () => listeners.delete(l) };
      },
      () => 'stopped',
    );
    const provider = new LeapfrogChatProvider(
      engine,
      (value) => ({ value }) as LanguageModelTextPart,
    );
    const [info] = await provider.provideLanguageModelChatInformation(
      { silent: true },
      new CancellationTokenSource().token,
    );
    const { model } = await s.conn.sendRequest(ChatModelRequest);
    assert.deepEqual(info, modelInformation(model!));
    const parts: string[] = [];
    await provider.provideLanguageModelChatResponse(
      info,
      [
        { role: 3, content: [{ value: SYSTEM }], name: undefined },
        { role: 1, content: [{ value: 'Once upon a time' }], name: undefined },
      ],
      { toolMode: 1, modelOptions: { temperature: 0, maxTokens: 12 } },
      { report: (p) => parts.push((p as LanguageModelTextPart).value) },
      new CancellationTokenSource().token,
    );
    const direct = await s.conn.sendRequest(ChatMessagesRequest, {
      requestId: 'lm-direct',
      messages: [
        { role: 'system', content: SYSTEM },
        { role: 'user', content: 'Once upon a time' },
      ],
      maxTokens: 12,
      temperature: 0,
    });
    assert.ok(parts.length > 1, `streamed in ${parts.length} parts`);
    assert.equal(parts.join(''), direct.text);
    const count = await provider.provideTokenCount(
      info,
      'Once upon a time',
      new CancellationTokenSource().token,
    );
    const { tokens } = await s.conn.sendRequest(CountTokensRequest, { text: 'Once upon a time' });
    assert.equal(count, tokens);
  });
});
