import { strict as assert } from 'node:assert';
import { ExtraContextRing } from '../../engine/completion/extra-context';

describe('extra context ring', () => {
  it('changes slowly: one chunk per interval, never from the current file', () => {
    let now = 0;
    const ring = new ExtraContextRing(
      { maxChunks: 2, chunkLines: 4, minRotateMs: 1000, maxPending: 8 },
      () => now,
    );
    const lines = ['a', 'b', 'c', 'd', 'e', 'f', 'g', 'h'];
    ring.noteActivity('u1', 'one.ts', lines, 1);
    ring.noteActivity('u2', 'two.ts', lines, 5);
    ring.noteActivity('cur', 'cur.ts', lines, 0);
    ring.rotate('cur', (t) => t.length);
    assert.deepEqual(ring.chunksFor('cur', 1000), [{ path: 'one.ts', text: 'a\nb\nc\nd' }]);
    ring.rotate('cur', (t) => t.length); // too soon
    assert.equal(ring.size, 1);
    now = 1500;
    ring.rotate('cur', (t) => t.length);
    assert.deepEqual(
      ring.chunksFor('cur', 1000).map((c) => c.path),
      ['one.ts', 'two.ts'],
    );
    assert.deepEqual(
      ring.chunksFor('u1', 1000).map((c) => c.path),
      ['two.ts'],
    );
    assert.deepEqual(
      ring.chunksFor('cur', 10).map((c) => c.path),
      [],
    );
    ring.forget('u1');
    assert.deepEqual(
      ring.chunksFor('cur', 1000).map((c) => c.path),
      ['two.ts'],
    );
  });
});
