import { strict as assert } from 'node:assert';
import { buildContextWindow, splitLines } from '../../engine/completion/context-window';

const count = (s: string) => s.split(/\s+/).filter(Boolean).length; // one token a word
const lines = Array.from({ length: 200 }, (_, i) => `line ${i} word`);

describe('context windows', () => {
  it('sizes prefix and suffix in tokens', () => {
    const w = buildContextWindow(
      lines,
      100,
      4,
      { prefixTokens: 40, suffixTokens: 20, anchorLines: 1 },
      count,
    );
    assert.ok(w.prefix.endsWith('line'));
    assert.equal(w.linePrefix, 'line');
    assert.equal(w.lineSuffix, ' 100 word');
    const prefixTokens = w.prefix.split('\n').reduce((n, l) => n + count(l) + 1, 0);
    assert.ok(prefixTokens <= 41, `prefix tokens ${prefixTokens}`);
    assert.ok(w.linesBelow.length >= 3 && w.linesBelow.length <= 5);
    assert.equal(w.suffix.split('\n')[0], ' 100 word');
  });

  it('anchors the prefix start so it stays put while typing down', () => {
    const budget = { prefixTokens: 80, suffixTokens: 10, anchorLines: 16 };
    const starts = new Set<number>();
    for (let line = 100; line < 110; line++)
      starts.add(buildContextWindow(lines, line, 0, budget, count).prefixStartLine);
    assert.ok(starts.size <= 2, `start lines: ${[...starts]}`);
    for (const s of starts) assert.equal(s % 16, 0);
  });

  it('keeps the previous first line while it fits, so the KV prefix is reused', () => {
    const budget = { prefixTokens: 80, suffixTokens: 10, anchorLines: 16 };
    const first = buildContextWindow(lines, 120, 0, budget, count);
    // Up and down inside the window: the same first line (a fresh window would move).
    for (const line of [first.prefixStartLine, 113, 118, 125]) {
      const w = buildContextWindow(lines, line, 0, budget, count, first.prefixStartLine);
      assert.equal(w.prefixStartLine, first.prefixStartLine, `line ${line}`);
      assert.ok(w.prefix.split('\n').reduce((n, l) => n + count(l) + 1, 0) <= 81);
    }
    assert.notEqual(
      buildContextWindow(lines, 113, 0, budget, count).prefixStartLine,
      first.prefixStartLine,
      'without the previous start the window would have moved',
    );
  });

  it('moves with room to spare once typing has left the window, and follows the cursor up', () => {
    const budget = { prefixTokens: 80, suffixTokens: 10, anchorLines: 1 };
    const first = buildContextWindow(lines, 120, 0, budget, count);
    const down = buildContextWindow(lines, 160, 0, budget, count, first.prefixStartLine);
    const prefixTokens = down.prefix.split('\n').reduce((n, l) => n + count(l) + 1, 0);
    assert.ok(prefixTokens <= 61, `moved window holds ${prefixTokens} tokens (room left)`);
    const up = buildContextWindow(lines, 50, 0, budget, count, first.prefixStartLine);
    assert.equal(
      up.prefixStartLine,
      buildContextWindow(lines, 50, 0, budget, count).prefixStartLine,
    );
  });

  it('handles the first and last lines and a huge line', () => {
    const w = buildContextWindow(
      ['abc'],
      0,
      3,
      { prefixTokens: 10, suffixTokens: 10, anchorLines: 16 },
      count,
    );
    assert.equal(w.prefix, 'abc');
    assert.equal(w.suffix, '');
    const big = ['x '.repeat(5000)];
    const h = buildContextWindow(
      big,
      0,
      10000,
      { prefixTokens: 100, suffixTokens: 10, anchorLines: 16 },
      count,
    );
    assert.ok(h.prefix.length <= 300);
  });

  it('splits lines like LSP', () => {
    assert.deepEqual(splitLines('a\r\nb\rc\n'), ['a', 'b', 'c', '']);
  });
});
