// The sidecar runs below the editor's priority (engine/cli/process-priority.ts): every thread
// of it, the engine's compute threads included, at the niceness asked for (10 unless --nice).
import { strict as assert } from 'node:assert';
import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { getPriority } from 'node:os';
import { cli, root, settledStatus, skipReason, startSidecar, testModel } from './sidecar';

/** Niceness of each thread of a process (Linux /proc: field 19 of stat). */
function threadNiceness(pid: number): number[] {
  return readdirSync(`/proc/${pid}/task`).map((tid) => {
    const stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
    return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[16]);
  });
}

describe('protocol: the sidecar yields the CPU to the editor', function () {
  this.timeout(120_000);

  before(function () {
    const why =
      skipReason() ??
      (process.platform !== 'linux' ? 'per-thread niceness is read from Linux /proc' : undefined) ??
      (getPriority() > 0 ? `this test runs at niceness ${getPriority()} already` : undefined);
    if (why) {
      console.log(`    SKIP sidecar priority: ${why}`);
      this.skip();
    }
  });

  for (const [args, expected] of [
    [[], 10],
    [['--nice', '3'], 3],
    [['--nice', '0'], 0],
  ] as const) {
    it(`runs every thread at niceness ${expected} with ${args.join(' ') || 'no --nice'}`, async () => {
      const s = await startSidecar(['--model', testModel(), ...args]);
      try {
        // Ready: the model is loaded and its thread pool exists.
        assert.equal((await settledStatus(s)).state, 'ready', s.stderr());
        const nice = threadNiceness(s.child.pid!);
        assert.ok(nice.length > 3, `threads: ${nice.length}`);
        assert.deepEqual([...new Set(nice)], [expected], `per thread: ${nice.join(' ')}`);
      } finally {
        await s.stop();
      }
    });
  }

  it('refuses a niceness outside 0–19 with a usage error', () => {
    const r = spawnSync(process.execPath, [cli, 'lsp', '--stdio', '--nice', '25'], {
      cwd: root,
      input: '',
      encoding: 'utf8',
    });
    assert.equal(r.status, 2, r.stderr);
    assert.match(r.stderr, /--nice must be 0–19, got 25/);
  });
});
