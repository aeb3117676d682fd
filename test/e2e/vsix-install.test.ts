// The linux-x64 package installed the way a user installs it (code-server's
// --install-extension on the .vsix, not a link to this checkout): it activates, its own
// sidecar loads its own bundled model with its own addon, and ghost text appears. The
// package comes from the packaging suite (test/.artifacts/packages/) or `npm run package`.
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync, realpathSync } from 'node:fs';
import { join } from 'node:path';
import {
  artifacts,
  launch,
  openFile,
  root,
  runCommand,
  sidecarPids,
  skipReason,
  statusText,
  waitGhost,
  waitReady,
  type Session,
} from './harness';

function packagedVsix(): string | undefined {
  for (const dir of [join(artifacts, 'packages'), root]) {
    if (!existsSync(dir)) continue;
    const f = readdirSync(dir).find((n) => /^leapfrog-linux-x64-.*\.vsix$/.test(n));
    if (f) return join(dir, f);
  }
  return undefined;
}

describe('e2e: the linux-x64 .vsix installed as a user would', function () {
  this.timeout(300_000);
  let s: Session | undefined;

  before(function () {
    const why =
      skipReason() ??
      (process.arch === 'x64' && process.platform === 'linux'
        ? packagedVsix()
          ? undefined
          : 'no leapfrog-linux-x64 .vsix (run `npm run package`, or the packaging suite first)'
        : 'not a linux-x64 machine');
    if (why) {
      console.log(`    SKIP vsix install: ${why}`);
      this.skip();
    }
  });
  after(async () => s?.stop());

  it('installs, starts its own sidecar from the package, and shows ghost text', async () => {
    const vsix = packagedVsix()!;
    s = await launch(
      'vsix-install',
      { 'shapes.py': 'import math\n\n\ndef circle_area(radius):\n' },
      {},
      { vsix },
    );
    await waitReady(s.page);
    // The sidecar runs from the installed copy (resolved: a link to this checkout would
    // resolve back into it), not from this checkout.
    const pids = sidecarPids(s.codeServerPid);
    assert.ok(pids.length > 0, 'no sidecar process');
    const cmdline = readFileSync(`/proc/${pids[0]}/cmdline`, 'utf8').split('\0');
    const script = realpathSync(cmdline.find((a) => a.endsWith('cli.js')) ?? '/');
    const installed = realpathSync(join(root, '.vscode-e2e', 'runs', 'vsix-install', 'extensions'));
    assert.ok(
      script.startsWith(installed + '/'),
      `sidecar runs ${script}, not the installed package`,
    );
    await openFile(s.page, 'shapes.py');
    await s.page.keyboard.press('Control+End');
    await s.page.keyboard.type('    return ', { delay: 25 });
    let ghost = await waitGhost(s.page, 30_000);
    if (!ghost) {
      await runCommand(s.page, 'Trigger Inline Suggestion');
      ghost = await waitGhost(s.page, 30_000);
    }
    assert.ok(ghost.trim(), `no ghost text; status bar: ${await statusText(s.page)}`);
  });
});
