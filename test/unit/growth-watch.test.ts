import { strict as assert } from 'node:assert';
import {
  GROWTH_WINDOW_MS,
  GrowthWatch,
  type GrowthPlace,
} from '../../extension/inline/growth-watch';

const at: GrowthPlace = { uri: 'file:///a.ts', version: 7, line: 3, character: 4 };
const pos = { line: 3, character: 4 };

describe('growth of a partial ghost-text answer', () => {
  it('asks again once when the document and cursor are as they were', () => {
    const w = new GrowthWatch();
    w.expect(at, 1000);
    assert.equal(w.grown(at.uri, pos, { ...at }, 1150), true);
    assert.equal(w.grown(at.uri, pos, { ...at }, 1160), false, 'only once');
  });

  it('leaves an edited document, a moved cursor, another file or no editor alone', () => {
    const cases: (GrowthPlace | undefined)[] = [
      { ...at, version: 8 },
      { ...at, character: 5 },
      { ...at, line: 2 },
      { ...at, uri: 'file:///b.ts' },
      undefined,
    ];
    for (const now of cases) {
      const w = new GrowthWatch();
      w.expect(at, 0);
      assert.equal(w.grown(at.uri, pos, now, 10), false, JSON.stringify(now));
    }
  });

  it('does not bring back, late, a suggestion the user may have dismissed', () => {
    const w = new GrowthWatch();
    w.expect(at, 1000);
    assert.equal(w.grown(at.uri, pos, { ...at }, 1000 + GROWTH_WINDOW_MS + 1), false);
  });

  it('ignores growth at another cursor, and any growth after a newer request', () => {
    const w = new GrowthWatch();
    w.expect(at, 0);
    assert.equal(w.grown(at.uri, { line: 3, character: 0 }, { ...at }, 10), false);
    w.clear();
    assert.equal(w.grown(at.uri, pos, { ...at }, 10), false);
  });
});
