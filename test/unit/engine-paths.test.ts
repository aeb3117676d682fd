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
import { FakeAddon, FakeSession, fakeInfo } from './fake-engine';
import {
  defaultGenerationSettings,
  type GenerationSettings,
} from '../../engine/generation/generation-config';
import { SpeculationTotals } from '../../engine/generation/speculation-totals';

const dir = mkdtempSync(join(tmpdir(), 'leapfrog-unit-'));
const good = join(dir, 'good.gguf');
writeFileSync(good, Buffer.concat([Buffer.from('GGUF'), Buffer.alloc(60)]));
const corrupt = join(dir, 'corrupt.gguf');
writeFileSync(corrupt, Buffer.concat([Buffer.from('GGUF'), Buffer.alloc(60)]));
const notGguf = join(dir, 'text.gguf');
writeFileSync(notGguf, 'hello, this is not a model at all');

async function setup(info = fakeInfo()) {
  const addon = new FakeAddon(info);
  const totals = new SpeculationTotals();
  const scheduler = new Scheduler(undefined, (s) => totals.add(s));
  const host = new ModelHost({ addon: () => addon, drain: () => scheduler.idle() });
  await host.load({ model: good, draft: null });
  const completion = addon.sessions[0];
  const chat = addon.sessions[1];
  const live: { settings: GenerationSettings } = { settings: defaultGenerationSettings() };
  const service = new CompletionService(
    host,
    scheduler,
    { ...defaultCompletionOptions, timeBudgetMs: 0, deadlineMs: 0 },
    undefined,
    () => live.settings,
  );
  return { addon, scheduler, host, completion, chat, service, live, totals };
}

const text = (ids: number[]) =>
  ids.map((i) => (i >= 1000 ? String.fromCodePoint(i - 1000) : '')).join('');

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

  it('answers at the deadline with the text so far and finishes the suggestion in the background', async () => {
    const { completion, service } = await setup();
    service.deadlineMs = 60;
    completion.tickMs = 15; // a slow model: 15 ms per token
    completion.reply = () => ['    return compute(alpha, beta)\n', 1];
    const t0 = Date.now();
    const r = await service.complete(req('def f():\n    \n', 1, 4)).result;
    const waited = Date.now() - t0;
    assert.equal(r.status, 'ok');
    assert.ok(r.status === 'ok' && r.partial, 'answered before the generation ended');
    const shown = r.status === 'ok' ? r.text : '';
    assert.ok(shown.length > 0 && 'return compute(alpha, beta)'.startsWith(shown), shown);
    assert.ok(shown.length < 'return compute(alpha, beta)'.length, `whole line already: ${shown}`);
    assert.ok(waited < 60 + 4 * 15 + 40, `answered after ${waited} ms`);
    // The generation went on: once it is done, typing the shown text on is served the rest.
    await new Promise((res) => setTimeout(res, 30 * 15));
    // The first generation, and (accept-ahead) one at the cursor after the whole suggestion.
    const generations = completion.calls.length;
    assert.ok(generations === 1 || generations === 2, `${generations} generations`);
    assert.equal(completion.calls[0].aborted, true, 'stopped at the line end, not run out');
    const typed = 'def f():\n    ' + shown + '\n';
    const rest = await service.complete(req(typed, 1, 4 + shown.length)).result;
    assert.deepEqual(rest.status === 'ok' && [rest.text, rest.source], [
      'return compute(alpha, beta)'.slice(shown.length),
      'typed-ahead',
    ]);
    assert.equal(completion.calls.length, generations, 'typing on asked the model nothing');
  });

  it('with a deadline, answers the first complete line at once; the rest grows into typed-ahead', async () => {
    const { completion, service } = await setup();
    service.deadlineMs = 2000; // far away: only the first line can make the early answer
    completion.tickMs = 5;
    const block = 'a = compute(1)\n    b = compute(2)\n    return a + b';
    completion.reply = () => ['    ' + block + '\n', 1];
    const t0 = Date.now();
    const r = await service.complete(req('def f():\n    \n', 1, 4)).result;
    const waited = Date.now() - t0;
    assert.ok(r.status === 'ok' && r.partial, 'answered before the generation ended');
    assert.equal(r.status === 'ok' && r.text, 'a = compute(1)');
    assert.ok(waited < 1000, `answered after ${waited} ms, not at the first line`);
    // The client is told when the suggestion has grown past what was answered...
    assert.equal(await (r.status === 'ok' && r.grown), true);
    // ...and asking again at the same cursor then gives all of it, without the model.
    const again = await service.complete(req('def f():\n    \n', 1, 4)).result;
    assert.deepEqual(again.status === 'ok' && [again.text, again.source, again.partial], [
      block,
      'typed-ahead',
      undefined,
    ]);
    assert.equal(completion.calls.length, 1);
  });

  it('computes the suggestion after an accept while the user reads, so Tab is answered from memory', async () => {
    const { completion, service } = await setup();
    service.deadlineMs = 1000;
    completion.tickMs = 2;
    const replies = [
      ['    total = 0', 1],
      ['\n    for x in xs:', 1],
    ];
    completion.reply = () => replies[Math.min(completion.calls.length - 1, 1)]!;
    const shown = await service.complete(req('def f(xs):\n    \n', 1, 4)).result;
    assert.equal(shown.status === 'ok' && shown.text, 'total = 0');
    for (let i = 0; i < 100 && !(completion.calls[1]?.finished ?? false); i++) {
      await new Promise((res) => setTimeout(res, 10));
    }
    assert.equal(completion.calls.length, 2, 'one generation ahead, at the accepted cursor');
    // Tab: the document now holds the suggestion, the cursor after it.
    const next = await service.complete(req('def f(xs):\n    total = 0\n', 1, 13)).result;
    assert.deepEqual(next.status === 'ok' && [next.text, next.source], [
      '\n    for x in xs:',
      'typed-ahead',
    ]);
    assert.equal(completion.calls.length, 2, 'the accept asked the model nothing');
  });

  it('typing into a suggestion that is still growing: partial, then the whole rest', async () => {
    const { completion, service } = await setup();
    service.deadlineMs = 2000;
    completion.tickMs = 5;
    const block = 'a = compute(1)\n    b = compute(2)\n    return a + b';
    completion.reply = () => ['    ' + block + '\n', 1];
    const first = await service.complete(req('def f():\n    \n', 1, 4)).result;
    assert.equal(first.status === 'ok' && first.text, 'a = compute(1)');
    // The user types 'a = ' while the rest is still being generated.
    const typed = await service.complete(req('def f():\n    a = \n', 1, 8)).result;
    assert.ok(typed.status === 'ok' && typed.source === 'typed-ahead' && typed.partial);
    assert.equal(await (typed.status === 'ok' && typed.grown), true);
    const again = await service.complete(req('def f():\n    a = \n', 1, 8)).result;
    assert.deepEqual(again.status === 'ok' && [again.text, again.source], [
      block.slice('a = '.length),
      'typed-ahead',
    ]);
    assert.equal(completion.calls.length, 1);
  });

  it('without a deadline (leapfrog complete, tests), the whole suggestion in one answer', async () => {
    const { completion, service } = await setup();
    completion.tickMs = 2;
    completion.reply = () => ['    a = 1\n    b = 2\n', 1];
    const r = await service.complete(req('def f():\n    \n', 1, 4)).result;
    assert.deepEqual(r.status === 'ok' && [r.text, r.partial], ['a = 1\n    b = 2', undefined]);
  });

  it('a finished prefetch answers the request at its cursor without the model', async () => {
    const { completion, service } = await setup();
    completion.reply = () => ['    total = 0', 1];
    await service.prefetch(req('def f():\n    \n', 1, 4)).result;
    const r = await service.complete(req('def f():\n    \n', 1, 4)).result;
    assert.deepEqual(r.status === 'ok' && [r.text, r.source], ['total = 0', 'typed-ahead']);
    assert.equal(completion.calls.length, 1);
  });

  it('a prefetch at the cursor the user just asked for does nothing (it would supersede the request)', async () => {
    const { completion, service } = await setup();
    completion.tickMs = 5;
    completion.reply = () => ['    value = compute()', 1];
    const doc = 'def f():\n    \n';
    const asked = service.complete(req(doc, 1, 4));
    await new Promise((res) => setTimeout(res, 10));
    const pre = await service.prefetch(req(doc, 1, 4)).result;
    assert.equal(pre.status, 'cancelled');
    const r = await asked.result;
    assert.deepEqual(r.status === 'ok' && r.text, 'value = compute()');
    assert.equal(completion.calls.length, 1);
  });

  it('a request at the cursor of a running prefetch joins it; one elsewhere supersedes it', async () => {
    const { completion, service } = await setup();
    service.deadlineMs = 0;
    completion.tickMs = 5;
    completion.reply = () => ['    items.append(value)', 1];
    const doc = 'def f():\n    \n';
    const pre = service.prefetch(req(doc, 1, 4));
    await new Promise((res) => setTimeout(res, 20));
    const joined = await service.complete(req(doc, 1, 4)).result;
    assert.deepEqual(joined.status === 'ok' && joined.text, 'items.append(value)');
    assert.equal(completion.calls.length, 1, 'the request joined the prefetch');
    assert.equal((await pre.result).status, 'ok');

    const other = 'def g():\n    \n    \n';
    const pre2 = service.prefetch(req(other, 1, 4));
    await new Promise((res) => setTimeout(res, 20));
    const elsewhere = await service.complete(req(other, 2, 4)).result;
    assert.equal(elsewhere.status, 'ok');
    assert.equal((await pre2.result).status, 'superseded');
    assert.equal(completion.calls.length, 3);
  });

  it('cancel aborts the native generation', async () => {
    const { completion, service } = await setup();
    completion.reply = () => ['x'.repeat(100)];
    const call = service.complete(req('x = \n', 0, 4));
    setTimeout(() => call.cancel(), 5);
    assert.equal((await call.result).status, 'cancelled');
    assert.equal(completion.calls[0].aborted, true);
  });

  it('runs each request with the settings of that moment', async () => {
    const { completion, service, live, totals } = await setup();
    completion.reply = () => ['1', 1];
    live.settings = { speculation: { ...live.settings.speculation, mode: 'ngram', budget: 4 } };
    await service.complete(req('a = \n', 0, 4)).result;
    live.settings = { speculation: { ...live.settings.speculation, mode: 'off' } };
    await service.complete(req('b = \n', 0, 4)).result;
    const [first, second] = completion.calls.map((c) => c.params);
    assert.deepEqual([first.speculation.mode, first.speculation.budget], ['ngram', 4]);
    assert.equal(second.speculation.mode, 'off');
    assert.equal(first.sampling.temperature, 0, 'completions decode greedily');
    assert.equal(totals.targetPasses, 4, 'every generation counts in the totals');
  });

  it('gives the lookup drafter the other open files, also when the prompt cannot show them', async () => {
    // A model that has FIM tokens but did not learn them: prefix-only prompts, no extra chunks.
    const { completion, service } = await setup(fakeInfo({ fimTrained: false }));
    completion.reply = () => [1];
    service.ring.noteActivity(
      'file:///t.py',
      't.py',
      ['def test_area():', '    assert area(2) == 4'],
      0,
    );
    await service.complete(req('def area(r):\n    \n', 1, 4)).result;
    const { prompt, params } = completion.calls[0];
    assert.ok(![2, 3, 4, 5, 6].some((id) => prompt.includes(id)), 'no FIM or repository tokens');
    assert.equal(text(prompt), 'def area(r):\n');
    assert.ok(params.corpus, 'a corpus was passed');
    assert.equal(text(params.corpus), 'def test_area():\n    assert area(2) == 4');
  });

  it('rejects out-of-range positions', async () => {
    const { service } = await setup();
    await assert.rejects(service.complete(req('a\nb', 5, 0)).result, PositionError);
    await assert.rejects(service.complete(req('a\nb', 1, 9)).result, PositionError);
    await assert.rejects(service.complete(req('a\nb', -1, 0)).result, PositionError);
  });
});

describe('model host (fake engine)', () => {
  it('loads with the threads and backend asked for and names the backend the addon reports', async () => {
    const addon = new FakeAddon();
    const host = new ModelHost({ addon: () => addon, threads: 2 });
    await host.load({ model: good, draft: null, threads: 3, backend: 'cpu' });
    assert.deepEqual(addon.loads.at(-1), { path: good, threads: 3, backend: 'cpu' });
    assert.equal(host.current?.threads, 3);
    assert.equal(host.backend(), 'cpu:fake');
    await host.load({ model: good, draft: null });
    assert.deepEqual(addon.loads.at(-1), { path: good, threads: 2, backend: 'auto' });
    host.dispose();
  });

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

  it('samples with the chat preset and speculates as the settings say', async () => {
    const { chat, scheduler, host, live, totals } = await setup();
    const settings = () => live.settings;
    const chatService = new ChatService(host, scheduler, () => {}, undefined, undefined, settings);
    chat.reply = () => ['ok', 7];
    live.settings = { speculation: { ...live.settings.speculation, mode: 'off' } };
    await chatService.turn({ conversationId: 'c3', message: 'hi' });
    await chatService.turn({ conversationId: 'c3', message: 'again', temperature: 0.9 });
    const [first, second] = chat.calls.map((c) => c.params);
    assert.equal(first.speculation.mode, 'off');
    assert.deepEqual([first.sampling.temperature, second.sampling.temperature], [0.2, 0.9]);
    assert.equal(first.sampling.repeatPenalty, 1.1);
    assert.ok(totals.targetPasses >= 6, 'chat turns count in the totals');
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
