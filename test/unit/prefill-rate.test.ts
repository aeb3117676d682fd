// The suffix a completion can afford: sized from the measured prompt speed and the deadline.
import { strict as assert } from 'node:assert';
import { PrefillRate } from '../../engine/completion/prefill-rate';
import { emptyStats } from '../../engine/scheduler/scheduler';

const stats = (promptTokens: number, reusedTokens: number, promptMs: number) => ({
  ...emptyStats(false),
  promptTokens,
  reusedTokens,
  promptMs,
});

describe('prefill rate', () => {
  it('keeps the configured suffix until a prompt speed is measured, and without a deadline', () => {
    const r = new PrefillRate();
    assert.equal(r.suffixTokens(256, 300), 256);
    r.note(stats(1000, 0, 10_000)); // 0.1 tokens/ms: a 1.5B model on two threads
    assert.equal(r.suffixTokens(256, 0), 256);
  });

  it('a slow model reads a short suffix, a fast one the configured size', () => {
    const slow = new PrefillRate();
    slow.note(stats(1000, 0, 10_000));
    assert.equal(slow.suffixTokens(256, 300), 16, 'at least the rest of the line');
    const medium = new PrefillRate();
    medium.note(stats(600, 100, 500)); // 1 token/ms
    assert.equal(medium.suffixTokens(256, 300), 30);
    const fast = new PrefillRate();
    fast.note(stats(2000, 0, 200)); // 10 tokens/ms
    assert.equal(fast.suffixTokens(256, 300), 256);
  });

  it('ignores prompts of a few fresh tokens (their time is mostly fixed costs)', () => {
    const r = new PrefillRate();
    r.note(stats(500, 490, 30));
    assert.equal(r.suffixTokens(256, 300), 256);
  });
});
