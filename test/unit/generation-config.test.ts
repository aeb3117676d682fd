// The one builder of a request's generation configuration: table → settings → overrides,
// later layers winning, the budget kept within one verification pass, and the context rule.
import { strict as assert } from 'node:assert';
import { GENERATION_DEFAULTS, MAX_DRAFT_BUDGET } from '../../engine/protocol';
import {
  CHAT_OVERRIDES,
  COMPLETION_OVERRIDES,
  buildGenerateParams,
  defaultGenerateParams,
  mergeOverrides,
  sessionContextSize,
} from '../../engine/generation/generation-config';

const settings = {
  speculation: { ...GENERATION_DEFAULTS.speculation, mode: 'ngram' as const, budget: 4 },
};

describe('generation configuration', () => {
  it('is the table of defaults when nothing overrides it', () => {
    const p = defaultGenerateParams();
    assert.deepEqual(p.sampling, GENERATION_DEFAULTS.sampling);
    assert.deepEqual(p.speculation, GENERATION_DEFAULTS.speculation);
    assert.equal(p.maxTokens, GENERATION_DEFAULTS.maxTokens);
    assert.equal(p.stopAtEog, GENERATION_DEFAULTS.stopAtEog);
    assert.equal('corpus' in p, false);
  });

  it('takes the settings over the table and the overrides over both', () => {
    const p = buildGenerateParams(GENERATION_DEFAULTS, settings, {
      maxTokens: 7,
      speculation: { tree: true },
      sampling: { temperature: 0.5 },
    });
    assert.deepEqual(p.speculation, { mode: 'ngram', budget: 4, adaptive: true, tree: true });
    assert.equal(p.sampling.temperature, 0.5);
    assert.equal(p.sampling.topK, GENERATION_DEFAULTS.sampling.topK);
    assert.equal(p.maxTokens, 7);
    const off = buildGenerateParams(GENERATION_DEFAULTS, settings, {
      speculation: { mode: 'off' },
    });
    assert.equal(off.speculation.mode, 'off');
  });

  it('keeps the budget within one verification pass', () => {
    const big = { speculation: { ...settings.speculation, budget: 64 } };
    assert.equal(
      buildGenerateParams(GENERATION_DEFAULTS, big).speculation.budget,
      MAX_DRAFT_BUDGET,
    );
    const negative = { speculation: { ...settings.speculation, budget: -3 } };
    assert.equal(buildGenerateParams(GENERATION_DEFAULTS, negative).speculation.budget, 0);
  });

  it('decodes completions greedily and samples chat, with the settings speculation', () => {
    const completion = buildGenerateParams(GENERATION_DEFAULTS, settings, COMPLETION_OVERRIDES);
    assert.equal(completion.sampling.temperature, 0);
    assert.equal(completion.speculation.mode, 'ngram');
    const chat = buildGenerateParams(
      GENERATION_DEFAULTS,
      settings,
      mergeOverrides(CHAT_OVERRIDES, { sampling: { temperature: 0.7 } }),
    );
    assert.equal(chat.sampling.temperature, 0.7);
    assert.equal(chat.sampling.repeatPenalty, CHAT_OVERRIDES.sampling?.repeatPenalty);
    assert.equal(chat.speculation.budget, 4);
  });

  it('passes a corpus only when there is one', () => {
    const corpus = [5, 6, -1, 7];
    assert.deepEqual(buildGenerateParams(GENERATION_DEFAULTS, settings, { corpus }).corpus, corpus);
    assert.equal(
      'corpus' in buildGenerateParams(GENERATION_DEFAULTS, settings, { corpus: [] }),
      false,
    );
  });

  it('sizes a session by the table, capped by the training context, unless asked', () => {
    assert.equal(sessionContextSize(2048), 2048);
    assert.equal(sessionContextSize(32768), GENERATION_DEFAULTS.contextSize);
    assert.equal(sessionContextSize(0), GENERATION_DEFAULTS.contextSize);
    assert.equal(sessionContextSize(512, 1024), 1024);
  });
});
