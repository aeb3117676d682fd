// `--draft self`: a Q4_0 copy of the target, written by the engine into the cache, drafts
// for it. The copy is a valid GGUF (llama.cpp loads it), and greedy output is unchanged.
import assert from 'node:assert/strict';
import { readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { greedy } from '../oracle/llama-cpp';
import { cliBuilt, repoRoot, sharedData, skipBecause } from '../support/paths';
import { runCli } from '../support/run-cli';

describe('self-drafting (--draft self)', function () {
  this.timeout(120000);
  const cache = join(repoRoot, 'test', '.fixtures', 'self-draft-cache');

  it('writes a lower-bit copy once and keeps greedy output identical', async function () {
    const data = sharedData();
    if (!data) skipBecause(this, '../shared/data is absent');
    if (!cliBuilt) skipBecause(this, 'not built (npm run build)');
    rmSync(cache, { recursive: true, force: true });
    // Put back afterwards: test/run-all.mjs points every suite's caches at a temporary dir.
    const savedCache = process.env.LEAPFROG_CACHE_DIR;
    process.env.LEAPFROG_CACHE_DIR = cache;
    const model = join(data, 'models', 'stories260K.gguf');
    const common = [
      'generate',
      '--model',
      model,
      '--prompt',
      'Once upon a time, Tom',
      '--max-tokens',
      '64',
      '--json',
    ];
    const plain = await runCli([...common, '--spec', 'off']);
    const spec = await runCli([
      ...common,
      '--spec',
      'draft',
      '--draft',
      'self',
      '--budget',
      '8',
      '--fixed-budget',
    ]);
    assert.equal(spec.code, 0, spec.stderr);
    const a = JSON.parse(plain.stdout);
    const b = JSON.parse(spec.stdout);
    assert.deepEqual(b.tokens, a.tokens);
    assert.ok(b.stats.drafted > 0 && b.stats.accepted > 0, JSON.stringify(b.stats));

    const files = readdirSync(cache).filter((f) => f.endsWith('-self-draft-q4_0.gguf'));
    assert.equal(files.length, 1);
    // llama.cpp reads the file the engine wrote, and it continues the story.
    const ids = a.prompt_tokens as number[];
    const tokens = await greedy(join(cache, files[0]), ids, 8);
    assert.equal(tokens.length, 8);
    if (savedCache === undefined) delete process.env.LEAPFROG_CACHE_DIR;
    else process.env.LEAPFROG_CACHE_DIR = savedCache;
  });
});
