// The completion and chat paths end to end over the fake engine (the real one is covered by
// the protocol suite): prompt building, stop rules aborting native work, typed-ahead reuse,
// cancellation, chat streaming with preemption, and model load errors with recovery.
import { strict as assert } from 'node:assert';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ModelHost, NoModelError } from '../../engine/models/model-host';
import { Scheduler } from '../../engine/scheduler/scheduler';
import { CompletionService, PositionError } from '../../engine/completion/completion-service';
import { defaultCompletionOptions } from '../../engine/completion/completion-options';
import { ChatService } from '../../engine/chat/chat-service';
import type { ChatDeltaParams } from '../../engine/protocol';
import { FakeAddon, FakeSession } from './fake-engine';

const dir = mkdtempSync(join(tmpdir(), 'leapfrog-unit-'));
const good = join(dir, 'good.gguf');
writeFileSync(good, Buffer.concat([Buffer.from('GGUF'), Buffer.alloc(60)]));
const corrupt = join(dir, 'corrupt.gguf');
writeFileSync(corrupt, Buffer.concat([Buffer.from('GGUF'), Buffer.alloc(60)]));
const notGguf = join(dir, 'text.gguf');
writeFileSync(notGguf, 'hello, this is not a model at all');

async function setup() {
  const addon = new FakeAddon();
  const scheduler = new Scheduler();
  const host = new ModelHost({ addon: () => addon, drain: () => scheduler.idle() });
  await host.load({ model: good, draft: null });
  const completion = addon.sessions[0];
  const chat = addon.sessions[1];
  const service = new CompletionService(host, scheduler, {
    ...defaultCompletionOptions,
    timeBudgetMs: 0,
  });
  return { addon, scheduler, host, completion, chat, service };
}

const req = (text: string, line: number, character: number) => ({
  uri: 'file:///a.py',
  path: 'a.py',
  repoName: 'r',
  text,
  line,
  character,
});

describe('completion path (fake engine)', () => {
  it('builds a FIM prompt, stops at the newline in single-line mode and post-processes', async () => {
    const { completion, service } = await setup();
    completion.reply = () => ['a, b)\nmore lines that are never generated'];
    const r = await service.complete(req('def f():\n    g()\n', 1, 6)).result;
    assert.equal(r.status, 'ok');
    assert.equal(r.status === 'ok' && r.text, 'a, b');
    const call = completion.calls[0];
    assert.equal(call.aborted, true, 'the newline stopped native work');
    const prompt = call.prompt;
    assert.equal(prompt[0], 5); // <|repo_name|>
    assert.ok(prompt.includes(2) && prompt.includes(3) && prompt[prompt.length - 1] === 4);
  });

  it('answers typed-ahead without the model', async () => {
    const { completion, service } = await setup();
    // The cursor stands in indentation: the prompt ends at the line break, so the model
    // writes the indentation itself (engine/completion/indent-healing.ts).
    completion.reply = () => ['    return a + b', 1];
    const r1 = await service.complete(req('def f(a, b):\n    \n', 1, 4)).result;
    assert.equal(r1.status === 'ok' && r1.text, 'return a + b');
    const r2 = await service.complete(req('def f(a, b):\n    ret\n', 1, 7)).result;
    assert.deepEqual(r2.status === 'ok' && [r2.text, r2.source], ['urn a + b', 'typed-ahead']);
    assert.equal(completion.calls.length, 1);
  });

  it('cancel aborts the native generation', async () => {
    const { completion, service } = await setup();
    completion.reply = () => ['x'.repeat(100)];
    const call = service.complete(req('x = \n', 0, 4));
    setTimeout(() => call.cancel(), 5);
    assert.equal((await call.result).status, 'cancelled');
    assert.equal(completion.calls[0].aborted, true);
  });

  it('rejects out-of-range positions', async () => {
    const { service } = await setup();
    await assert.rejects(service.complete(req('a\nb', 5, 0)).result, PositionError);
    await assert.rejects(service.complete(req('a\nb', 1, 9)).result, PositionError);
    await assert.rejects(service.complete(req('a\nb', -1, 0)).result, PositionError);
  });
});

describe('model host (fake engine)', () => {
  it('reports missing, non-GGUF and corrupt models clearly and recovers with a good one', async () => {
    const addon = new FakeAddon();
    const host = new ModelHost({ addon: () => addon });
    await assert.rejects(
      host.load({ model: join(dir, 'missing.gguf'), draft: null }),
      /model file not found/,
    );
    assert.equal(host.state.kind as string, 'error');
    await assert.rejects(host.whenReady(), NoModelError);
    await assert.rejects(host.load({ model: notGguf, draft: null }), /not a GGUF file/);
    await assert.rejects(
      host.load({ model: corrupt, draft: null }),
      /cannot load model .*bad tensor data/,
    );
    assert.equal(host.openSessions, 0);
    await host.load({ model: good, draft: null });
    assert.equal(host.state.kind as string, 'ready');
    assert.equal(host.openSessions, 2);
    // A failed switch keeps the loaded model serving.
    await assert.rejects(host.load({ model: corrupt, draft: null }));
    assert.equal(host.state.kind as string, 'ready');
    assert.equal(host.current?.paths.model, good);
    host.dispose();
    assert.equal(host.openSessions, 0);
    assert.ok(addon.sessions.every((s) => s.freed));
  });
});

describe('chat path (fake engine)', () => {
  it('streams deltas, stops at <|im_end|>, keeps history and survives preemption', async () => {
    const { chat, completion, scheduler, host, service } = await setup();
    const deltas: ChatDeltaParams[] = [];
    const chatService = new ChatService(host, scheduler, (d) => deltas.push(d));
    // Like the real engine, a restart continues from the prompt it is given (which now ends
    // with the tokens produced before the preemption).
    const full = 'Hello there, friend!';
    let firstPromptLength = -1;
    chat.reply = (prompt) => {
      if (firstPromptLength < 0) firstPromptLength = prompt.length;
      return [full.slice(prompt.length - firstPromptLength), 7, 'ignored'];
    };
    completion.reply = () => ['y'];
    chat.tickMs = 2;
    const turn = chatService.turn({ conversationId: 'c1', message: 'hi' });
    await new Promise((r) => setTimeout(r, 10));
    await service.complete(req('x = \n', 0, 4)).result; // preempts the chat turn
    const result = await turn;
    assert.equal(result.finishReason, 'stop');
    assert.ok(result.stats.preemptions >= 1);
    assert.equal(
      deltas
        .filter((d) => !d.done)
        .map((d) => d.delta)
        .join(''),
      result.text,
    );
    assert.ok(deltas[deltas.length - 1].done);
    // The restarted generation continued from what was produced: the text is whole.
    assert.equal(result.text, full);
    const prompt = String.fromCodePoint(...chat.calls[0].prompt.map((i) => i - 1000));
    assert.ok(prompt.includes('<|im_start|>user\nhi<|im_end|>'), prompt);
  });

  it('cancels a turn', async () => {
    const { chat, scheduler, host } = await setup();
    const deltas: ChatDeltaParams[] = [];
    const chatService = new ChatService(host, scheduler, (d) => deltas.push(d));
    chat.reply = () => ['z'.repeat(200)];
    const turn = chatService.turn({ conversationId: 'c2', message: 'go' });
    await new Promise((r) => setTimeout(r, 10));
    assert.equal(chatService.cancel('c2'), true);
    const r = await turn;
    assert.equal(r.finishReason, 'cancelled');
    assert.equal(deltas[deltas.length - 1].finishReason, 'cancelled');
    assert.ok(chat.calls[0].aborted);
  });
});

void FakeSession;
