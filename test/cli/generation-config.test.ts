// One generation configuration on both sides: the native addon's defaults are the table of
// engine/protocol.ts, and `leapfrog complete` takes the generation flags of `generate`
// (its settings reach the engine as the sidecar's do).
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadAddon } from '../../engine/native/load-addon';
import { defaultGenerateParams } from '../../engine/generation/generation-config';
import { MAX_DRAFT_BUDGET } from '../../engine/protocol';
import { addonBuilt, cliBuilt, repoRoot, skipBecause } from '../support/paths';
import { runCli } from '../support/run-cli';

/**
 * Deep equality where numbers compare at float32 precision: the native struct holds its
 * sampling parameters as C++ floats, so 0.95 comes back as 0.949999988079071.
 */
function assertSameConfig(actual: unknown, expected: unknown, path = 'params'): void {
  if (typeof expected === 'number') {
    assert.equal(typeof actual, 'number', path);
    assert.equal(Math.fround(actual as number), Math.fround(expected), path);
    return;
  }
  if (typeof expected !== 'object' || expected === null) {
    assert.equal(actual, expected, path);
    return;
  }
  assert.equal(typeof actual, 'object', path);
  const a = actual as Record<string, unknown>;
  const e = expected as Record<string, unknown>;
  assert.deepEqual(Object.keys(a).sort(), Object.keys(e).sort(), `${path}: fields`);
  for (const k of Object.keys(e)) assertSameConfig(a[k], e[k], `${path}.${k}`);
}

describe('one generation configuration', function () {
  this.timeout(120000);

  it("the addon's defaultGenerateParams() is protocol.ts's table", function () {
    if (!addonBuilt) skipBecause(this, 'addon not built (npm run build)');
    const addon = loadAddon();
    assert.equal(
      typeof addon.defaultGenerateParams,
      'function',
      'addon has no defaultGenerateParams',
    );
    assertSameConfig(addon.defaultGenerateParams(), defaultGenerateParams());
  });

  describe('leapfrog complete takes the generation flags', () => {
    const dir = mkdtempSync(join(tmpdir(), 'leapfrog-complete-'));
    const file = join(dir, 'repeat.py');
    const line = 'print("tick", 1, 2, 3)';
    writeFileSync(file, `${Array.from({ length: 12 }, () => line).join('\n')}\n\n`);
    const model = join(repoRoot, 'models', 'leapfrog-coder.gguf');
    const complete = (...flags: string[]) =>
      runCli([
        'complete',
        '--model',
        model,
        '--file',
        file,
        '--line',
        '12',
        '--character',
        '0',
        '--threads',
        '1',
        '--max-tokens',
        '24',
        '--json',
        ...flags,
      ]);

    before(function () {
      if (!cliBuilt) skipBecause(this, 'not built (npm run build)');
    });

    it('--spec off drafts nothing, --spec ngram --budget 4 drafts at most 4 a pass', async () => {
      const off = await complete('--spec', 'off');
      assert.equal(off.code, 0, off.stderr);
      const offStats = (JSON.parse(off.stdout) as { stats: Record<string, number> }).stats;
      assert.equal(offStats.drafted, 0);
      const ngram = await complete('--spec', 'ngram', '--budget', '4', '--fixed-budget');
      assert.equal(ngram.code, 0, ngram.stderr);
      const r = JSON.parse(ngram.stdout) as { text: string; stats: Record<string, number> };
      assert.ok(r.stats.drafted > 0, 'repeated lines give the lookup drafter matches');
      assert.ok(r.stats.max_pass_tokens <= 5, `a pass verified ${r.stats.max_pass_tokens} tokens`);
      // Greedy speculation is exact: the same ghost text as without it.
      assert.equal(r.text, (JSON.parse(off.stdout) as { text: string }).text);
    });

    it(`refuses a budget above ${MAX_DRAFT_BUDGET} and an unknown mode as bad usage`, async () => {
      const big = await complete('--budget', String(MAX_DRAFT_BUDGET + 1));
      assert.equal(big.code, 2);
      assert.ok(
        big.stderr.startsWith(`leapfrog: error: --budget must be at most ${MAX_DRAFT_BUDGET}`),
        big.stderr,
      );
      const mode = await complete('--spec', 'fast');
      assert.equal(mode.code, 2);
      assert.match(mode.stderr, /^leapfrog: error: --spec must be one of auto\|off\|ngram\|draft/);
    });
  });
});
