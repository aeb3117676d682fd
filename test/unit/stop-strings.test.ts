// The stop-string cutter the server streams through: the text ends before the earliest stop
// string whatever the pieces are, and nothing of a stop string is ever emitted.
import assert from 'node:assert/strict';
import { StopStrings } from '../../engine/generation/stop-strings';

function run(stops: string[], pieces: string[]): { out: string; stoppedAt: string } {
  const s = new StopStrings(stops);
  let out = '';
  for (const p of pieces) {
    const r = s.push(p);
    out += r.emit;
    if (r.stopped) return { out, stoppedAt: s.stoppedAt };
  }
  return { out: out + s.flush(), stoppedAt: s.stoppedAt };
}

describe('StopStrings', () => {
  it('cuts at the earliest stop string, not the first one listed', () => {
    assert.deepEqual(run(['b', 'a'], ['xa b']), { out: 'x', stoppedAt: 'a' });
  });

  it('holds back a possible start of a stop string until it is decided', () => {
    const s = new StopStrings(['<|end|>']);
    assert.deepEqual(s.push('hello <|'), { emit: 'hello ', stopped: false });
    assert.deepEqual(s.push('en'), { emit: '', stopped: false });
    assert.deepEqual(s.push('d|> more'), { emit: '', stopped: true });
    assert.equal(s.stoppedAt, '<|end|>');
  });

  it('releases held text that turned out not to be a stop string', () => {
    assert.deepEqual(run(['STOP'], ['a ST', 'ART b']), { out: 'a START b', stoppedAt: '' });
    assert.deepEqual(run(['STOP'], ['tail ST']), { out: 'tail ST', stoppedAt: '' });
  });

  it('finds a stop string split over many pieces, whatever the split', () => {
    const text = 'def f(x):\n    return x\n\nprint(f(2))';
    for (let i = 1; i < text.length; i++) {
      const r = run(['\n\n', 'return'], [text.slice(0, i), text.slice(i)]);
      assert.deepEqual(r, { out: 'def f(x):\n    ', stoppedAt: 'return' }, `split at ${i}`);
    }
  });

  it('passes everything through without stop strings', () => {
    assert.deepEqual(run([], ['a', 'b<', '|']), { out: 'ab<|', stoppedAt: '' });
  });
});
