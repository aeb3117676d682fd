// Settings reach the engine of a running sidecar: the speculation mode and budget from
// initializationOptions, then from workspace/didChangeConfiguration (`settings.leapfrog`,
// as VS Code nests the section) for the very next request; threads and model reload the
// model inside the same server process, with work-done progress. Status reports the
// settings in effect and the running totals. Each check fails when its setting is ignored.
import { strict as assert } from 'node:assert';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import type { StatusResult } from '../../engine/protocol';
import {
  completeIn,
  delay,
  fileUri,
  root,
  settledStatus,
  skipReason,
  startSidecar,
  status,
  testModel,
  THREADS,
  type Sidecar,
} from './sidecar';

// Code that repeats itself: the lookup drafter finds the line being written in the lines
// above and proposes the rest of it (the bundled model continues it token for token).
const LINE =
  '    total = compute_total(items, discount=0.25, tax_rate=0.08, currency="EUR", rounding="half-even")';
const SOURCE = `def report(items):\n${Array.from({ length: 10 }, () => LINE).join('\n')}\n    \n`;
const CURSOR = { line: 11, character: 4 };

describe('protocol: settings reach the engine', function () {
  this.timeout(180_000);
  let s: Sidecar;
  const dir = mkdtempSync(join(tmpdir(), 'leapfrog-settings-'));
  let documents = 0;

  before(async function () {
    const why = skipReason();
    if (why) {
      console.log(`    SKIP protocol suite: ${why}`);
      this.skip();
    }
    s = await startSidecar(['--model', testModel()], {
      speculation: { mode: 'off', budget: 4 },
      threads: Number(THREADS),
    });
    const st = await settledStatus(s);
    assert.equal(st.state, 'ready', `model did not load: ${st.message}\n${s.stderr()}`);
  });

  after(async () => {
    await s?.stop();
  });

  /** One completion on a fresh document (no typed-ahead answer from an earlier one). */
  function complete(): Promise<string> {
    return completeIn(s, fileUri(join(dir, `report-${++documents}.py`)), SOURCE, CURSOR);
  }

  async function configure(leapfrog: Record<string, unknown>): Promise<void> {
    await s.conn.sendNotification('workspace/didChangeConfiguration', { settings: { leapfrog } });
  }

  /** Polls status until `done` holds (a reload runs in the background). */
  async function statusWhen(done: (st: StatusResult) => boolean): Promise<StatusResult> {
    const end = Date.now() + 60_000;
    for (;;) {
      const st = await status(s);
      if (done(st) && st.state !== 'loading') return st;
      if (Date.now() > end) throw new Error(`status never got there: ${JSON.stringify(st)}`);
      await delay(50);
    }
  }

  it("mode 'off' from initializationOptions: completions run and nothing is drafted", async () => {
    const text = await complete();
    assert.match(text, /compute_total/);
    const st = await status(s);
    assert.equal(st.speculation.mode, 'off');
    assert.equal(st.speculation.drafted, 0);
    assert.ok(st.speculation.targetPasses > 0, 'the completion ran on the model');
  });

  it("didChangeConfiguration to 'ngram', budget 4: the next completion drafts, ≤ 5 tokens a pass", async () => {
    await configure({ speculation: { mode: 'ngram', budget: 4 } });
    const before = await status(s);
    assert.deepEqual([before.speculation.mode, before.speculation.budget], ['ngram', 4]);
    await complete();
    const st = await status(s);
    assert.ok(st.speculation.drafted > 0, 'nothing was drafted');
    assert.ok(st.speculation.accepted > 0, 'no draft was accepted');
    assert.ok(
      st.speculation.maxPassTokens <= 5,
      `a pass verified ${st.speculation.maxPassTokens} tokens (budget 4 allows 1 + 4)`,
    );
  });

  it("didChangeConfiguration back to 'off' stops drafting at once", async () => {
    await configure({ speculation: { mode: 'off', budget: 4 } });
    const before = await status(s);
    await complete();
    const st = await status(s);
    assert.equal(st.speculation.mode, 'off');
    assert.ok(st.speculation.targetPasses > before.speculation.targetPasses, 'it ran');
    assert.equal(st.speculation.drafted, before.speculation.drafted, 'it drafted');
  });

  it('threads and model reload inside the same server, with progress, and it keeps answering', async () => {
    const pid = s.child.pid;
    const started = await status(s);
    assert.equal(started.threads, Number(THREADS));
    await configure({ threads: 1 });
    const reloaded = await statusWhen((st) => st.threads === 1);
    assert.equal(reloaded.state, 'ready');
    assert.equal(reloaded.modelPath, started.modelPath);
    assert.match(await complete(), /compute_total/);

    const other = resolve(root, 'models', 'leapfrog-coder-draft.gguf');
    await configure({ model: other });
    const switched = await statusWhen((st) => st.modelPath === other);
    assert.equal(switched.state, 'ready');
    assert.equal(switched.threads, 1, 'the threads setting stays');
    assert.equal(typeof (await complete()), 'string');

    assert.equal(s.child.pid, pid);
    assert.equal(s.child.exitCode, null, 'the server process is still running');
    assert.equal(s.stderr().match(/language server started/g)?.length, 1, 'started once');
    const begins = s.notifications.filter(
      (n) =>
        n.method === '$/progress' &&
        (n.params as { value?: { kind?: string; title?: string } }).value?.title ===
          'Leapfrog: reloading model',
    );
    assert.ok(begins.length >= 2, 'each reload reported work-done progress');
  });

  it('a model that fails to load leaves the previous one serving, and status says why', async () => {
    const serving = (await status(s)).modelPath;
    const missing = join(dir, 'missing.gguf');
    await configure({ model: missing });
    const st = await statusWhen((x) => x.loadError !== undefined);
    assert.match(st.loadError ?? '', /missing\.gguf: model file not found/);
    assert.equal(st.state, 'ready');
    assert.equal(st.modelPath, serving);
    assert.equal(typeof (await complete()), 'string');
    await configure({ model: serving });
    const back = await statusWhen((x) => x.loadError === undefined);
    assert.equal(back.modelPath, serving);
  });
});
