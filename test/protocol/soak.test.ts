// A short soak in `npm test` (one minute; LEAPFROG_SOAK_MS sets it): typing with a completion
// per keystroke and chat turns in between, against the real sidecar. Memory stays flat once
// warm (the sidecar's RSS), the native sessions stay the same, every request is answered.
// The hour-long run with latency start vs end is test/bench/soak.ts.
import { strict as assert } from 'node:assert';
import { settledStatus, skipReason, startSidecar, status, type Sidecar } from './sidecar';
import { soak } from './soak-session';

const MIB = 1024 * 1024;

describe('protocol: a soak session of typing and chat', function () {
  const durationMs = Number(process.env.LEAPFROG_SOAK_MS ?? 60_000);
  this.timeout(durationMs + 120_000);
  let s: Sidecar;

  before(async function () {
    const why = skipReason();
    if (why) {
      console.log(`    SKIP protocol suite: ${why}`);
      this.skip();
    }
    s = await startSidecar();
    assert.equal((await settledStatus(s)).state, 'ready', s.stderr());
  });

  after(async () => {
    await s?.stop();
  });

  it('memory flat once warm, the same native sessions, every request answered', async () => {
    const r = await soak(s, { durationMs });
    assert.deepEqual(r.failedRequests, []);
    assert.deepEqual(s.clientErrors, []);
    assert.ok(r.completions.length > 20, `${r.completions.length} completions answered`);
    const turns = Object.values(r.chatTurns).reduce((a, b) => a + b, 0);
    assert.ok(turns >= durationMs / 12_000, `${turns} chat turns`);
    assert.equal(r.chatTurns.error, 0);
    assert.deepEqual(
      [...new Set(r.samples.map((x) => x.openSessions))],
      [r.samples[0]!.openSessions],
      'native sessions allocated once',
    );
    // Warm: after the first quarter (caches, JIT, the allocator's arenas have grown).
    const warm = r.samples.filter((x) => x.atMs >= durationMs / 4);
    const base = warm[0]!.rss;
    const peak = Math.max(...warm.map((x) => x.rss));
    console.log(
      `      ${r.keystrokes} keystrokes, ${r.completions.length} completions answered ` +
        `(${r.cancelledCompletions} cancelled), ${turns} chat turns; RSS warm ` +
        `${(base / MIB).toFixed(1)} MiB, peak ${(peak / MIB).toFixed(1)} MiB`,
    );
    assert.ok(peak - base < 32 * MIB, `RSS grew ${((peak - base) / MIB).toFixed(1)} MiB once warm`);
    const end = await status(s);
    assert.equal(end.activeChats, 0, 'no chat turn left behind');
    assert.equal(end.activeGenerations, 0, 'nothing generating after the session');
  });
});
