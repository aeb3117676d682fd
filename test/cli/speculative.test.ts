// Speculative decoding is lossless: with greedy decoding every drafter, at every budget,
// gives exactly the tokens of plain decoding; with sampling the distribution of tokens is
// that of plain sampling; and the KV cache stays right over thousands of rollbacks.
// Target: the real pretrained stories260K; draft: its own Q8_0 and Q4_0 copies (same
// vocabulary, close but different predictions — real partial acceptance).
import assert from 'node:assert/strict';
import { join } from 'node:path';
import type { NativeModel, SpecMode } from '../../engine/native/addon';
import { GGMLType } from '../fixtures/gguf-writer';
import { generate, greedyParams, load, session, speculating } from '../support/addon';
import { addonBuilt, sharedData, skipBecause } from '../support/paths';
import { requantizedCopy } from '../support/requantize';

const subjects = ['Lily', 'Tom', 'The little dog', 'A big bird', 'Sue and Ben', 'The cat', 'Mom'];
const actions = [
  'went to the park',
  'found a shiny ball',
  'was very sad',
  'wanted to play',
  'saw a big tree',
  'liked to sing',
  'had a red car',
];
/** 50 prompts: story openings, some repeating themselves (lookup drafting finds matches). */
function prompts(): string[] {
  const out: string[] = [];
  for (let i = 0; out.length < 50; i++) {
    const s = subjects[i % subjects.length];
    const a = actions[(i * 3) % actions.length];
    out.push(i % 3 === 0 ? `${s} ${a}. ${s} ${a} again. ${s}` : `Once upon a time, ${s} ${a}.`);
  }
  return out;
}

describe('speculative decoding', function () {
  this.timeout(600000);
  let target: NativeModel;
  let draftQ8: NativeModel;
  let draftQ4: NativeModel;
  let promptIds: number[][];

  before(async function () {
    const data = sharedData();
    if (!addonBuilt) skipBecause(this, 'addon not built (npm run build)');
    if (!data) skipBecause(this, '../shared/data is absent');
    const stories = join(data, 'models', 'stories260K.gguf');
    target = await load(stories);
    draftQ8 = await load(requantizedCopy(stories, GGMLType.Q8_0));
    draftQ4 = await load(requantizedCopy(stories, GGMLType.Q4_0));
    promptIds = prompts().map((p) => target.tokenize(p, true, false));
  });

  const configs: {
    spec: SpecMode;
    budget: number;
    draft?: 'q8' | 'q4';
    adaptive: boolean;
    tree?: boolean;
  }[] = [
    { spec: 'ngram', budget: 4, adaptive: false },
    { spec: 'ngram', budget: 32, adaptive: false },
    { spec: 'draft', budget: 8, draft: 'q4', adaptive: false },
    { spec: 'draft', budget: 32, draft: 'q8', adaptive: false },
    { spec: 'draft', budget: 16, draft: 'q8', adaptive: true },
    { spec: 'auto', budget: 32, draft: 'q4', adaptive: false },
    { spec: 'auto', budget: 16, draft: 'q8', adaptive: true },
    { spec: 'draft', budget: 12, draft: 'q4', adaptive: false, tree: true },
    { spec: 'draft', budget: 32, draft: 'q4', adaptive: true, tree: true },
    { spec: 'auto', budget: 32, draft: 'q8', adaptive: false, tree: true },
  ];

  for (const c of configs) {
    const label = `${c.spec} budget ${c.budget}${c.draft ? ` (${c.draft} draft)` : ''}${c.adaptive ? ', adaptive' : ''}${c.tree ? ', tree' : ''}`;
    it(`greedy output equals --spec off on 50 prompts: ${label}`, async () => {
      const plain = session(target);
      const draft = c.draft === 'q8' ? draftQ8 : c.draft === 'q4' ? draftQ4 : undefined;
      const spec = session(target, draft);
      let drafted = 0;
      let accepted = 0;
      let passes = 0;
      let generated = 0;
      for (const prompt of promptIds) {
        const base = await generate(plain, prompt, greedyParams);
        const params = speculating({
          mode: c.spec,
          budget: c.budget,
          adaptive: c.adaptive,
          tree: c.tree === true,
        });
        const out = await generate(spec, prompt, params);
        assert.deepEqual(out.tokens, base.tokens, `prompt ${JSON.stringify(prompt)}`);
        assert.equal(out.text, base.text);
        drafted += out.stats.drafted;
        accepted += out.stats.accepted;
        passes += out.stats.targetPasses;
        generated += out.stats.generated;
      }
      // The comparison is only worth something if drafts were made and some were kept.
      assert.ok(drafted > 0, 'nothing was drafted');
      assert.ok(accepted > 0, 'no draft token was accepted');
      assert.ok(passes < generated, `no pass saved (${passes} passes for ${generated} tokens)`);
      if (c.tree && !c.adaptive) {
        // Trees must really branch: the same drafts as chains would draft fewer nodes. Each
        // chain in a session of its own: a session carries the draft model's calibration from
        // one generation to the next (a tree's verdicts calibrate nothing), which lengthens
        // chains and would compare unlike with unlike.
        let chainDrafted = 0;
        for (const prompt of promptIds) {
          const params = speculating({ mode: c.spec, budget: c.budget, adaptive: false });
          const fresh = session(target, draft);
          chainDrafted += (await generate(fresh, prompt, params)).stats.drafted;
          fresh.free();
        }
        assert.ok(drafted > chainDrafted, `tree drafted ${drafted}, chain ${chainDrafted}`);
      }
      plain.free();
      spec.free();
    });
  }

  it('keeps the KV cache consistent over thousands of passes with rollbacks', async () => {
    const spec = session(target, draftQ4);
    const fresh = session(target);
    let passes = 0;
    const params = speculating({ mode: 'draft', budget: 12, adaptive: false }, { maxTokens: 96 });
    for (let round = 0; passes < 2000; round++) {
      const prompt = promptIds[round % promptIds.length];
      const out = await generate(spec, prompt, params);
      passes += out.stats.targetPasses;
      if (round % 10 === 9) {
        // The cached state after many rollbacks must equal a fresh computation.
        const probe = [...prompt, ...out.tokens.slice(0, 40)];
        const reused = await spec.lastLogits(probe);
        const recomputed = await fresh.lastLogits(probe);
        let maxDiff = 0;
        for (let i = 0; i < reused.length; i++)
          maxDiff = Math.max(maxDiff, Math.abs(reused[i] - recomputed[i]));
        assert.ok(maxDiff < 1e-3, `logits drifted by ${maxDiff} after ${passes} passes`);
      }
    }
    spec.free();
    fresh.free();
  });

  /** Two-sample chi-square over outcomes seen ≥ 10 times in total (rarer ones pooled). */
  function chiSquare(a: Map<string, number>, b: Map<string, number>) {
    let chi2 = 0;
    let bins = 0;
    let pooledA = 0;
    let pooledB = 0;
    for (const k of new Set([...a.keys(), ...b.keys()])) {
      const x = a.get(k) ?? 0;
      const y = b.get(k) ?? 0;
      if (x + y < 10) {
        pooledA += x;
        pooledB += y;
        continue;
      }
      chi2 += (x - y) ** 2 / (x + y);
      bins++;
    }
    if (pooledA + pooledB > 0) {
      chi2 += (pooledA - pooledB) ** 2 / (pooledA + pooledB);
      bins++;
    }
    const dof = bins - 1;
    // Critical value at p = 0.001 (Wilson–Hilferty approximation).
    const critical = dof * (1 - 2 / (9 * dof) + 3.09 * Math.sqrt(2 / (9 * dof))) ** 3;
    return { chi2, dof, critical };
  }

  /** How often each pair of 2nd and 3rd tokens (the drafted, verified ones) comes out. */
  async function histogram(spec: SpecMode, tree: boolean): Promise<Map<string, number>> {
    const prompt = target.tokenize('Once upon a time, there was a', true, false);
    const s = session(target, draftQ8);
    const counts = new Map<string, number>();
    for (let seed = 1; seed <= 1500; seed++) {
      const params = speculating(
        { mode: spec, budget: 4, adaptive: false, tree },
        {
          maxTokens: 3,
          sampling: { temperature: 1, seed: spec === 'off' ? seed : seed + 1000003 },
        },
      );
      const out = await generate(s, prompt, params);
      const key = out.tokens.slice(1, 3).join(',');
      counts.set(key, (counts.get(key) ?? 0) + 1);
    }
    s.free();
    return counts;
  }

  for (const tree of [false, true]) {
    it(`sampling with speculation keeps the target distribution (chi-square, ${tree ? 'tree' : 'chain'})`, async () => {
      const { chi2, dof, critical } = chiSquare(
        await histogram('off', false),
        await histogram('draft', tree),
      );
      assert.ok(dof >= 5, `too few outcome bins (${dof + 1}) for a meaningful test`);
      assert.ok(chi2 < critical, `chi2 ${chi2.toFixed(1)} ≥ ${critical.toFixed(1)} (dof ${dof})`);
    });
  }
});
