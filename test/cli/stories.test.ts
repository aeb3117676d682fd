// A real pretrained Llama (stories260K) reproduces llama.cpp's greedy continuations token
// for token, through the CLI exactly as the contract describes it.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { cliBuilt, sharedData, skipBecause } from '../support/paths';
import { runCliJson } from '../support/run-cli';

interface ExpectedCase {
  prompt: string;
  prompt_tokens: number[];
  max_tokens: number;
  tokens: number[];
  completion: string;
}

interface GenerateJson {
  text: string;
  tokens: number[];
  prompt_tokens: number[];
  stats: Record<string, number>;
}

describe('stories260K greedy continuations (llama.cpp reference)', function () {
  const data = sharedData();
  const cases: ExpectedCase[] = data
    ? JSON.parse(readFileSync(join(data, 'models', 'stories260K.expected.json'), 'utf8')).cases
    : [{ prompt: '(shared data absent)' } as ExpectedCase];

  for (const c of cases) {
    it(`continues "${c.prompt}"`, async function () {
      if (!data) skipBecause(this, '../shared/data is absent');
      if (!cliBuilt) skipBecause(this, 'not built (npm run build)');
      const out = await runCliJson<GenerateJson>([
        'generate',
        '--model',
        join(data, 'models', 'stories260K.gguf'),
        '--prompt',
        c.prompt,
        '--max-tokens',
        String(c.max_tokens),
        '--spec',
        'off',
        '--threads',
        '1',
      ]);
      assert.deepEqual(out.prompt_tokens, c.prompt_tokens);
      assert.deepEqual(out.tokens, c.tokens.slice(0, out.tokens.length));
      assert.equal(out.tokens.length, c.tokens.length);
      assert.equal(out.text, c.completion);
      assert.equal(out.stats.generated, c.tokens.length);
    });
  }
});
