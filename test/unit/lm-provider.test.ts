// extension/lm's provider logic, driven as VS Code 1.104 drives a LanguageModelChatProvider:
// a scripted engine port stands in for the sidecar (the real one is in
// test/protocol/chat-messages.test.ts), a progress that records the parts, and
// vscode-jsonrpc's CancellationTokenSource as the token (the same shape as vscode's).
import { strict as assert } from 'node:assert';
import { CancellationTokenSource, Emitter } from 'vscode-jsonrpc';
import type { LanguageModelTextPart } from 'vscode';
import type {
  ChatDeltaParams,
  ChatMessagesParams,
  ChatModelInfo,
  ChatResult,
} from '../../engine/protocol';
import { splitChatMessages } from '../../engine/server/language-model-handlers';
import { languageModelApi, type LanguageModelChatRequestMessage } from '../../extension/lm/api';
import type { LmEngine } from '../../extension/lm/engine-port';
import {
  LeapfrogChatProvider,
  approximateTokenCount,
  modelInformation,
  modelOptions,
  type LeapfrogModelInformation,
} from '../../extension/lm/provider';

class TextPart {
  constructor(readonly value: string) {}
}

const MODEL: ChatModelInfo = {
  name: 'Leapfrog Coder',
  path: '/models/leapfrog-coder.gguf',
  architecture: 'qwen2',
  contextSize: 4096,
  defaultMaxTokens: 512,
  maxOutputTokens: 2048,
  hasChatTemplate: true,
};

/** An engine whose chat streams `reply` in `chunks` deltas, then answers `result`. */
class ScriptedEngine implements LmEngine {
  readonly deltas = new Emitter<ChatDeltaParams>();
  asked: ChatMessagesParams[] = [];
  cancelled: string[] = [];
  model: ChatModelInfo | null = MODEL;
  tokens: (text: string) => Promise<number> = async (t) => t.split(' ').length;
  /** Runs between the deltas it sends; a test cancels here. */
  between: (i: number) => void = () => {};
  reply = ['Hello', ', ', 'world'];
  resultText?: string;
  fail?: Error;

  chatModel = async () => this.model;
  countTokens = (text: string) => this.tokens(text);
  cancel = (id: string) => void this.cancelled.push(id);
  onChatDelta = (l: (d: ChatDeltaParams) => void) => this.deltas.event(l);

  async chat(params: ChatMessagesParams): Promise<ChatResult> {
    this.asked.push(params);
    if (this.fail) throw this.fail;
    const id = params.requestId;
    this.deltas.fire({ conversationId: 'someone-else', delta: 'NOT OURS', done: false });
    for (const [i, delta] of this.reply.entries()) {
      this.between(i);
      this.deltas.fire({ conversationId: id, delta, done: false });
    }
    this.deltas.fire({ conversationId: id, delta: '', done: true, finishReason: 'stop' });
    return {
      conversationId: id,
      text: this.resultText ?? this.reply.join(''),
      finishReason: this.cancelled.length ? 'cancelled' : 'stop',
      stats: { promptTokens: 10, generated: 3, tokensPerSecond: 1, preemptions: 0 },
    };
  }
}

function message(role: number, ...content: unknown[]): LanguageModelChatRequestMessage {
  return { role, content, name: undefined };
}

const info = modelInformation(MODEL);
const options = { toolMode: 1 };

async function respond(
  provider: LeapfrogChatProvider,
  messages: LanguageModelChatRequestMessage[],
  cts = new CancellationTokenSource(),
  opts: { toolMode: number; tools?: never[]; modelOptions?: Record<string, unknown> } = options,
): Promise<string[]> {
  const parts: string[] = [];
  const progress = { report: (p: unknown) => parts.push((p as TextPart).value) };
  await provider.provideLanguageModelChatResponse(info, messages, opts, progress, cts.token);
  return parts;
}

describe('extension/lm: the Language Model chat provider', () => {
  let engine: ScriptedEngine;
  let provider: LeapfrogChatProvider;
  beforeEach(() => {
    engine = new ScriptedEngine();
    provider = new LeapfrogChatProvider(engine, (v) => new TextPart(v) as LanguageModelTextPart);
  });

  it('lists the loaded model with its context limits and no tool calling', async () => {
    const list = await provider.provideLanguageModelChatInformation(
      { silent: true },
      new CancellationTokenSource().token,
    );
    assert.equal(list.length, 1);
    const m: LeapfrogModelInformation = list[0];
    assert.equal(m.id, 'leapfrog-coder');
    assert.equal(m.name, 'Leapfrog Coder');
    assert.equal(m.family, 'qwen2');
    assert.equal(m.maxInputTokens + m.maxOutputTokens, 4096);
    assert.equal(m.maxOutputTokens, 512);
    assert.deepEqual(m.capabilities, { imageInput: false, toolCalling: false });
  });

  it('lists nothing while no model is loaded or the engine does not answer', async () => {
    const token = new CancellationTokenSource().token;
    engine.model = null;
    assert.deepEqual(
      await provider.provideLanguageModelChatInformation({ silent: true }, token),
      [],
    );
    engine.chatModel = async () => {
      throw new Error('the engine is not running');
    };
    assert.deepEqual(
      await provider.provideLanguageModelChatInformation({ silent: true }, token),
      [],
    );
  });

  it('sends the whole message list, roles and text, and streams the deltas as text parts', async () => {
    const parts = await respond(provider, [
      message(3, new TextPart('Be brief.')),
      message(1, new TextPart('What is '), new TextPart('2+2?')),
      message(2, new TextPart('4.'), { callId: 'c1', name: 'calc', input: {} }),
      message(
        1,
        { callId: 'c1', content: [new TextPart('result: 4')] },
        { mimeType: 'image/png', data: new Uint8Array(1) },
      ),
    ]);
    assert.deepEqual(parts, ['Hello', ', ', 'world'], 'our deltas, in order, nobody else’s');
    const asked = engine.asked[0];
    assert.match(asked.requestId, /^lm-[0-9a-f-]{36}$/);
    assert.deepEqual(asked.messages, [
      { role: 'system', content: 'Be brief.' },
      { role: 'user', content: 'What is 2+2?' },
      { role: 'assistant', content: '4.' },
      { role: 'user', content: 'result: 4' },
    ]);
    assert.equal(asked.maxTokens, undefined);
  });

  it('each request has its own id', async () => {
    await respond(provider, [message(1, new TextPart('a'))]);
    await respond(provider, [message(1, new TextPart('b'))]);
    assert.notEqual(engine.asked[0].requestId, engine.asked[1].requestId);
  });

  it('reports the part of the reply that no delta brought', async () => {
    engine.reply = ['Hel'];
    engine.resultText = 'Hello!';
    assert.deepEqual(await respond(provider, [message(1, new TextPart('hi'))]), ['Hel', 'lo!']);
  });

  it('passes temperature and max tokens from modelOptions', async () => {
    await respond(provider, [message(1, new TextPart('hi'))], undefined, {
      toolMode: 1,
      modelOptions: { temperature: 0, max_tokens: 33.7 },
    });
    assert.equal(engine.asked[0].temperature, 0);
    assert.equal(engine.asked[0].maxTokens, 33);
    assert.deepEqual(modelOptions({ temperature: 'hot', maxTokens: -1 }), {});
    assert.deepEqual(modelOptions(undefined), {});
  });

  it('a cancelled token cancels the request and nothing more is reported', async () => {
    const cts = new CancellationTokenSource();
    engine.between = (i) => i === 1 && cts.cancel();
    const parts = await respond(provider, [message(1, new TextPart('long story'))], cts);
    assert.deepEqual(parts, ['Hello']);
    assert.deepEqual(engine.cancelled, [engine.asked[0].requestId]);
  });

  it('a token cancelled before the start sends nothing', async () => {
    const cts = new CancellationTokenSource();
    cts.cancel();
    assert.deepEqual(await respond(provider, [message(1, new TextPart('x'))], cts), []);
    assert.equal(engine.asked.length, 0);
  });

  it('an engine failure is a clear error', async () => {
    engine.fail = new Error('no model is loaded');
    await assert.rejects(respond(provider, [message(1, new TextPart('x'))]), {
      message: 'Leapfrog: no model is loaded',
    });
  });

  it('refuses a request that requires a tool call', async () => {
    await assert.rejects(
      respond(provider, [message(1, new TextPart('x'))], undefined, {
        toolMode: 2,
        tools: [{} as never],
      }),
      /cannot call tools/,
    );
    assert.equal(engine.asked.length, 0);
  });

  it('counts tokens with the engine, and approximates only while it cannot', async () => {
    const token = new CancellationTokenSource().token;
    assert.equal(await provider.provideTokenCount(info, 'one two three', token), 3);
    assert.equal(
      await provider.provideTokenCount(
        info,
        message(1, new TextPart('a b'), new TextPart(' c')),
        token,
      ),
      3,
    );
    engine.tokens = async () => {
      throw new Error('no model is loaded');
    };
    const text = 'x'.repeat(41);
    assert.equal(await provider.provideTokenCount(info, text, token), approximateTokenCount(text));
    assert.equal(approximateTokenCount(text), 11);
  });

  it('finds the API only where VS Code has it (1.104+)', () => {
    assert.equal(languageModelApi(undefined), undefined);
    assert.equal(languageModelApi({ selectChatModels: () => [] }), undefined);
    const lm = { registerLanguageModelChatProvider: () => ({ dispose() {} }) };
    assert.equal(languageModelApi(lm), lm);
  });
});

describe('engine: a message list as one chat turn (splitChatMessages)', () => {
  it('joins system messages, merges consecutive roles, takes the last user message', () => {
    assert.deepEqual(
      splitChatMessages([
        { role: 'system', content: 'A' },
        { role: 'user', content: 'q1' },
        { role: 'user', content: 'q1 more' },
        { role: 'assistant', content: 'a1' },
        { role: 'system', content: 'B' },
        { role: 'user', content: 'q2' },
      ]),
      {
        system: 'A\n\nB',
        history: [
          { role: 'user', content: 'q1\n\nq1 more' },
          { role: 'assistant', content: 'a1' },
        ],
        message: 'q2',
      },
    );
    assert.deepEqual(splitChatMessages([{ role: 'user', content: 'hi' }]), {
      system: undefined,
      history: [],
      message: 'hi',
    });
  });

  it('refuses lists it cannot answer', () => {
    assert.throws(() => splitChatMessages([]), /non-empty array/);
    assert.throws(
      () => splitChatMessages([{ role: 'assistant', content: 'a' }]),
      /last message must be the user/,
    );
    assert.throws(() => splitChatMessages([null]), /messages\[0\] must be/);
  });
});
