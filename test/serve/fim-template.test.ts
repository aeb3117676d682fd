// Fill-in-the-middle through a model whose FIM tokens are live (a random-weight qwen2 model
// with Qwen's vocabulary, so the repository-level template applies): /infill and
// /v1/completions with `suffix` must build exactly the prompt the Qwen template spells —
// checked by greedy output equal to `leapfrog generate` on that prompt written by hand — and
// /infill must give `leapfrog complete`'s ghost text for the same file and cursor.
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { makeRandomModel } from '../fixtures/random-model';
import { missingVocab } from '../fixtures/shared-data';
import { runCliJson } from '../support/run-cli';
import { skipBecause } from '../support/paths';
import { postJson, skipReason, startServe, THREADS, type ServeProcess } from './serve-process';

const PREFIX = 'def add(a, b):\n    ';
const SUFFIX = '\n\nprint(add(1, 2))\n';
const EXTRA = { filename: 'util.py', text: 'def sub(a, b):\n    return a - b\n' };

describe('leapfrog serve: FIM prompts of a model with FIM tokens', function () {
  this.timeout(300_000);
  let server: ServeProcess;
  let model: string;

  before(async function () {
    const why = skipReason() ?? missingVocab('qwen2');
    if (why) skipBecause(this, why);
    model = await makeRandomModel({ arch: 'qwen2', type: 'Q8_0' });
    server = await startServe(['--model', model]);
  });

  after(async () => {
    if (server) assert.equal(await server.stop(), 0, `unclean exit; stderr:\n${server.stderr()}`);
  });

  async function generate(prompt: string, maxTokens: number): Promise<string> {
    const r = await runCliJson<{ text: string }>([
      'generate',
      '--model',
      model,
      '--threads',
      THREADS,
      '--prompt',
      prompt,
      '--max-tokens',
      String(maxTokens),
    ]);
    return r.text;
  }

  it('/infill builds the repository-level Qwen prompt with input_extra', async () => {
    const { status, json } = await postJson(`${server.url}/infill`, {
      input_prefix: PREFIX,
      input_suffix: SUFFIX,
      input_extra: [EXTRA],
      repo_name: 'calc',
      file_path: 'calc.py',
      n_predict: 24,
    });
    assert.equal(status, 200, JSON.stringify(json));
    const byHand =
      `<|repo_name|>calc\n<|file_sep|>${EXTRA.filename}\n${EXTRA.text}` +
      `<|file_sep|>calc.py\n<|fim_prefix|>${PREFIX}<|fim_suffix|>${SUFFIX}<|fim_middle|>`;
    assert.equal(json.content, await generate(byHand, 24));
    assert.equal(json.tokens_predicted, 24);
  });

  it('/v1/completions with suffix builds the same template (llama.cpp default names)', async () => {
    const { status, json } = await postJson(`${server.url}/v1/completions`, {
      prompt: PREFIX,
      suffix: SUFFIX,
      max_tokens: 24,
    });
    assert.equal(status, 200, JSON.stringify(json));
    const byHand =
      `<|repo_name|>myproject\n<|file_sep|>filename\n` +
      `<|fim_prefix|>${PREFIX}<|fim_suffix|>${SUFFIX}<|fim_middle|>`;
    assert.equal((json.choices as { text: string }[])[0].text, await generate(byHand, 24));
  });

  it("/infill gives `leapfrog complete`'s ghost text for the same file and cursor", async () => {
    const dir = mkdtempSync(join(tmpdir(), 'leapfrog-serve-fim-'));
    const file = join(dir, 'calc.py');
    const line = 'print(add(1, 2)) if True else None';
    writeFileSync(file, `def add(a, b):\n    return a + b\n\n${line}\n`);
    process.env.LEAPFROG_COMPLETION_TIME_BUDGET_MS = '0';
    const complete = await runCliJson<{ text: string }>([
      'complete',
      '--model',
      model,
      '--threads',
      THREADS,
      '--file',
      file,
      '--line',
      '3',
      '--character',
      String(line.length),
    ]);
    const at = `def add(a, b):\n    return a + b\n\n${line}`.length;
    const text = `def add(a, b):\n    return a + b\n\n${line}\n`;
    const { json } = await postJson(`${server.url}/infill`, {
      input_prefix: text.slice(0, at),
      input_suffix: text.slice(at),
      repo_name: basename(dirname(file)), // what `complete` names a folder outside git
      file_path: basename(file),
      n_predict: 128,
    });
    assert.ok(complete.text.length > 0, 'complete gave no text: nothing to compare');
    const raw = (json.content as string).replace(/[ \t]+$/gm, '');
    assert.ok(
      raw.startsWith(complete.text),
      `complete: ${JSON.stringify(complete.text)}\ninfill: ${JSON.stringify(json.content)}`,
    );
  });
});
