// Files under the engine (issue 18), as the editor sees them: the sidecar serves a private
// copy of the bundled model; the copy is truncated, then replaced, then deleted. The sidecar
// must stay alive (no SIGBUS: native/src/gguf/detach.cpp), keep completing with the same
// text, and its status must say that the file changed and that a reload picks it up.
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { addonPath, loadAddon } from '../../engine/native/load-addon';
import { skipBecause } from '../support/paths';
import type { StatusResult } from '../../engine/protocol';
import {
  completeIn,
  delay,
  fileUri,
  settledStatus,
  skipReason,
  startSidecar,
  status,
  testModel,
  type Sidecar,
} from './sidecar';

/** `p`, or a rejection naming the signal as soon as the sidecar dies (a SIGBUS, say). */
function unlessItDies<T>(sc: Sidecar, p: Promise<T>): Promise<T> {
  const died = new Promise<never>((_, reject) => {
    const fail = () =>
      reject(
        new Error(`the sidecar died (${sc.child.signalCode ?? sc.child.exitCode}): ${sc.stderr()}`),
      );
    if (sc.child.exitCode !== null || sc.child.signalCode !== null) fail();
    else sc.child.once('exit', fail);
  });
  return Promise.race([p, died]);
}

/** The first leapfrog/didChangeStatus whose modelFileChanged matches `re` (10 s at most). */
async function notified(sc: Sidecar, re: RegExp): Promise<string> {
  const end = Date.now() + 10_000;
  for (;;) {
    for (const n of sc.notifications) {
      const changed = (n.params as StatusResult | undefined)?.modelFileChanged;
      if (n.method === 'leapfrog/didChangeStatus' && changed && re.test(changed)) return changed;
    }
    if (Date.now() > end) throw new Error(`no status notification matching ${re}`);
    await delay(100);
  }
}

const DOC = 'def add(a, b):\n    return a + b\n\n\ndef mul(a, b):\n    return';

describe('protocol: the model file changes under the sidecar', function () {
  this.timeout(120_000);
  let dir: string;
  let copy: string;
  let sc: Sidecar | undefined;

  before(function () {
    const why = skipReason();
    if (why) skipBecause(this, why);
    if (!loadAddon().systemInfo().detachesModelFiles) {
      skipBecause(this, `the native addon (${addonPath()}) predates it: rebuild (npm run build)`);
    }
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'leapfrog-model-changed-'));
    copy = path.join(dir, 'model.gguf');
    fs.copyFileSync(testModel(), copy);
  });

  after(async function () {
    await sc?.stop();
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
  });

  it('truncated, replaced, deleted: still completing, and the status says so', async function () {
    sc = await startSidecar(['--model', copy]);
    const loaded = await settledStatus(sc);
    assert.equal(loaded.state, 'ready', loaded.message);
    assert.equal(loaded.modelFileChanged, undefined);
    const uri = fileUri(path.join(dir, 'a.py'));
    const position = { line: 5, character: 10 };
    const before = await completeIn(sc, uri, DOC, position);
    assert.ok(before.length > 0, 'the model completes the document');

    const size = fs.statSync(copy).size;
    fs.truncateSync(copy, Math.floor(size / 2));
    fs.truncateSync(copy, 0);
    // The sidecar notices by itself (the client is told without asking).
    const told = await unlessItDies(sc, notified(sc, /was truncated/));
    assert.match(told, /model file .*model\.gguf was truncated/);
    const truncated = await unlessItDies(sc, status(sc));
    assert.equal(truncated.state, 'ready');
    assert.match(truncated.modelFileChanged ?? '', /model file .*model\.gguf was truncated/);
    assert.match(truncated.modelFileChanged ?? '', /reload the model/);
    assert.equal(truncated.message, truncated.modelFileChanged);
    const uri2 = fileUri(path.join(dir, 'b.py'));
    assert.equal(await unlessItDies(sc, completeIn(sc, uri2, DOC, position)), before);

    // Replaced by another file under the same name (a download tool's rename into place).
    const next = path.join(dir, 'next.gguf');
    fs.copyFileSync(testModel(), next);
    fs.renameSync(next, copy);
    assert.match((await status(sc)).modelFileChanged ?? '', /was replaced/);

    fs.unlinkSync(copy);
    assert.match((await status(sc)).modelFileChanged ?? '', /was deleted/);
    const uri3 = fileUri(path.join(dir, 'c.py'));
    assert.equal(await unlessItDies(sc, completeIn(sc, uri3, DOC, position)), before);
    assert.equal(sc.child.exitCode, null, `sidecar exited: ${sc.stderr()}`);
    assert.equal(sc.child.signalCode, null, `sidecar killed: ${sc.stderr()}`);
  });
});
