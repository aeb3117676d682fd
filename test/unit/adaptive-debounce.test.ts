import { strict as assert } from 'node:assert';
import { AdaptiveDebounce } from '../../extension/inline/latency';

describe('adaptive debounce', () => {
  it('waits not at all for a fast engine, more for a slow one, never over 60 ms', () => {
    const d = new AdaptiveDebounce();
    assert.equal(d.delay(0), 0, 'nothing measured yet');
    for (let i = 0; i < 20; i++) d.record(30);
    assert.equal(d.delay(0), 0, 'answers in 30 ms: no wait');
    assert.equal(d.delay(25), 25, "the user's minimum still holds");
    for (let i = 0; i < 20; i++) d.record(200);
    assert.ok(Math.abs(d.delay(0) - 40) <= 1, `200 ms answers: ${d.delay(0)} ms`);
    for (let i = 0; i < 20; i++) d.record(5000);
    assert.equal(d.delay(0), 60);
  });
});
