// `leapfrog serve` through the official `openai` npm client: models list, completions and
// chat, streaming and not, stop strings, max_tokens, seeded sampling — and greedy output equal
// to `leapfrog generate` on the same prompt, token for token.
import assert from 'node:assert/strict';
import OpenAI from 'openai';
import { runCliJson } from '../support/run-cli';
import { skipBecause } from '../support/paths';
import { skipReason, startServe, testModel, THREADS, type ServeProcess } from './serve-process';

const PROMPT = 'def fibonacci(n):';

describe('leapfrog serve with the openai client', function () {
  this.timeout(180_000);
  let server: ServeProcess;
  let client: OpenAI;
  let greedy: OpenAI.Completions.Completion;

  before(async function () {
    const why = skipReason();
    if (why) skipBecause(this, why);
    server = await startServe();
    client = new OpenAI({ baseURL: `${server.url}/v1`, apiKey: 'unused', maxRetries: 0 });
    greedy = await client.completions.create({
      model: 'leapfrog-coder',
      prompt: PROMPT,
      max_tokens: 48,
      temperature: 0,
    });
  });

  after(async () => {
    if (server) assert.equal(await server.stop(), 0, `unclean exit; stderr:\n${server.stderr()}`);
  });

  it('lists the loaded model', async () => {
    const page = await client.models.list();
    assert.deepEqual(
      page.data.map((m) => [m.id, m.object, m.owned_by]),
      [['leapfrog-coder', 'model', 'leapfrog']],
    );
    const one = await client.models.retrieve('leapfrog-coder');
    assert.equal(one.id, 'leapfrog-coder');
  });

  it('greedy completion equals leapfrog generate on the same prompt (same tokens)', async () => {
    const cli = await runCliJson<{ text: string; tokens: number[]; prompt_tokens: number[] }>([
      'generate',
      '--model',
      testModel(),
      '--threads',
      THREADS,
      '--prompt',
      PROMPT,
      '--max-tokens',
      '48',
    ]);
    const r = await fetch(`${server.url}/v1/completions`, {
      method: 'POST',
      body: JSON.stringify({ prompt: PROMPT, max_tokens: 48, temperature: 0, return_tokens: true }),
    });
    const body = (await r.json()) as { choices: { text: string; tokens: number[] }[] };
    assert.deepEqual(body.choices[0].tokens, cli.tokens);
    assert.equal(greedy.choices[0].text, cli.text);
    assert.equal(greedy.usage?.prompt_tokens, cli.prompt_tokens.length);
    assert.equal(greedy.usage?.completion_tokens, 48);
    assert.equal(greedy.usage?.total_tokens, cli.prompt_tokens.length + 48);
    assert.equal(greedy.choices[0].finish_reason, 'length');
  });

  it('reports speculation figures in usage', () => {
    const spec = (greedy.usage as unknown as { speculation: Record<string, number> }).speculation;
    assert.ok(spec.target_passes > 0 && spec.target_passes <= 48, JSON.stringify(spec));
    assert.ok(spec.accepted <= spec.drafted, JSON.stringify(spec));
    // With the bundled draft, greedy speculation saves passes on this repetitive text.
    assert.ok(spec.target_passes < 48, JSON.stringify(spec));
  });

  it('streams the same completion, then usage when asked', async () => {
    const stream = await client.completions.create({
      model: 'leapfrog-coder',
      prompt: PROMPT,
      max_tokens: 48,
      temperature: 0,
      stream: true,
      stream_options: { include_usage: true },
    });
    let text = '';
    const finish: (string | null)[] = [];
    let usage: OpenAI.Completions.CompletionUsage | undefined;
    let chunks = 0;
    for await (const chunk of stream) {
      chunks++;
      for (const c of chunk.choices) {
        text += c.text;
        if (c.finish_reason) finish.push(c.finish_reason);
      }
      if (chunk.usage) usage = chunk.usage;
    }
    assert.equal(text, greedy.choices[0].text);
    assert.ok(chunks > 10, `only ${chunks} chunks: not streamed`);
    assert.deepEqual(finish, ['length']);
    assert.equal(usage?.completion_tokens, 48);
  });

  it('stops exactly before the earliest stop string, never sending it', async () => {
    const full = greedy.choices[0].text;
    const stops = ['== f', '\n\n']; // "\n\n" comes first in the text, "== f" first in the list
    const cut = full.slice(0, Math.min(...stops.map((s) => full.indexOf(s))));
    assert.ok(
      full.indexOf('\n\n') > 0 && full.includes('== f'),
      `text was ${JSON.stringify(full)}`,
    );
    const r = await client.completions.create({
      model: 'leapfrog-coder',
      prompt: PROMPT,
      max_tokens: 48,
      temperature: 0,
      stop: stops,
    });
    assert.equal(r.choices[0].text, cut);
    assert.equal(r.choices[0].finish_reason, 'stop');

    // A stop string of several tokens, streamed: held back until it is certain, then cut.
    const stop = 'f(x) == f(x)';
    const stream = await client.completions.create({
      model: 'leapfrog-coder',
      prompt: PROMPT,
      max_tokens: 48,
      temperature: 0,
      stop,
      stream: true,
    });
    let text = '';
    for await (const chunk of stream) text += chunk.choices[0]?.text ?? '';
    assert.equal(text, full.slice(0, full.indexOf(stop)));
  });

  it('honours max_tokens', async () => {
    const r = await client.completions.create({
      model: 'leapfrog-coder',
      prompt: PROMPT,
      max_tokens: 5,
      temperature: 0,
    });
    assert.equal(r.usage?.completion_tokens, 5);
    assert.equal(r.choices[0].finish_reason, 'length');
    assert.ok(greedy.choices[0].text.startsWith(r.choices[0].text));
  });

  it('samples reproducibly with a seed at temperature > 0', async () => {
    const sample = async (seed: number) =>
      (
        await client.completions.create({
          model: 'leapfrog-coder',
          prompt: 'import ',
          max_tokens: 24,
          temperature: 1.2,
          top_p: 1,
          seed,
        })
      ).choices[0].text;
    const first = await sample(7);
    assert.equal(await sample(7), first);
    const others = await Promise.all([1, 2, 3].map(sample));
    assert.ok(
      others.some((t) => t !== first),
      `every seed gave ${JSON.stringify(first)}: not sampling`,
    );
  });

  it('chats through the GGUF chat template, streaming and not alike', async () => {
    const messages: OpenAI.Chat.ChatCompletionMessageParam[] = [
      { role: 'system', content: 'You are a helpful coding assistant.' },
      { role: 'user', content: 'Write a Python function that adds two numbers.' },
    ];
    const whole = await client.chat.completions.create({
      model: 'leapfrog-coder',
      messages,
      max_tokens: 40,
      temperature: 0,
    });
    const reply = whole.choices[0].message;
    assert.equal(reply.role, 'assistant');
    assert.ok(reply.content && reply.content.length > 0);
    assert.ok(!reply.content.includes('<|im_end|>'));
    assert.ok(['stop', 'length'].includes(whole.choices[0].finish_reason));
    assert.ok((whole.usage?.prompt_tokens ?? 0) > 20); // the template's markers and both messages

    const stream = await client.chat.completions.create({
      model: 'leapfrog-coder',
      messages,
      max_tokens: 40,
      temperature: 0,
      stream: true,
    });
    let text = '';
    const roles: string[] = [];
    let finish: string | null = null;
    for await (const chunk of stream) {
      const c = chunk.choices[0];
      if (c?.delta.role) roles.push(c.delta.role);
      text += c?.delta.content ?? '';
      finish = c?.finish_reason ?? finish;
    }
    assert.deepEqual(roles, ['assistant']);
    assert.equal(text, reply.content);
    assert.equal(finish, whole.choices[0].finish_reason);
  });

  it('turns a bad request into an APIError with the message', async () => {
    await assert.rejects(
      client.completions.create({ model: 'x', prompt: PROMPT, temperature: 5 }),
      (e: unknown) =>
        e instanceof OpenAI.BadRequestError && /temperature/.test(e.message) && e.status === 400,
    );
  });
});
