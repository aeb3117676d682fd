// The self-draft cache on a full disk (issue 18): writing the Q4_0 copy fails with ENOSPC,
// the load goes on without a draft with a clear warning, and no half-written file is left
// taking space. The full disk is real: the copy's `.partial` file is a link to /dev/full
// (every write fails with ENOSPC, no root needed), or a 64 KiB tmpfs where mounting works.
// Run: npx mocha --import=tsx --timeout 120000 test/native/self-draft-full-disk.test.ts
import * as assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { loadModels } from '../../engine/models/load-models';
import { addonPath, loadAddon } from '../../engine/native/load-addon';
import { selfDraftFile } from '../../engine/native/self-draft';
import { cliPath, repoRoot, skipBecause } from '../support/paths';

const bundled = path.join(repoRoot, 'models', 'leapfrog-coder.gguf');

function cannotRun(): string | undefined {
  try {
    addonPath();
  } catch (e) {
    return (e as Error).message;
  }
  if (!fs.existsSync(bundled)) return `bundled model missing (${bundled})`;
  if (!fs.existsSync('/dev/full')) return '/dev/full is absent (not Linux)';
  return undefined;
}

describe('self-draft cache on a full disk', function () {
  this.timeout(120_000);
  const savedCache = process.env.LEAPFROG_CACHE_DIR;
  let dir: string;
  let cache: string;

  beforeEach(function () {
    const why = cannotRun();
    if (why) skipBecause(this, why);
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'leapfrog-full-disk-'));
    cache = path.join(dir, 'cache');
    fs.mkdirSync(cache);
    process.env.LEAPFROG_CACHE_DIR = cache;
  });

  afterEach(function () {
    if (savedCache === undefined) delete process.env.LEAPFROG_CACHE_DIR;
    else process.env.LEAPFROG_CACHE_DIR = savedCache;
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
  });

  it('ENOSPC: loads without a draft, warns, leaves no partial file', async function () {
    const partial = `${selfDraftFile(bundled)}.partial`;
    fs.symlinkSync('/dev/full', partial);
    const addon = loadAddon();
    const models = await loadModels(
      addon,
      { model: bundled, draft: 'self' },
      { threads: 2, backend: 'cpu' },
    );
    try {
      assert.equal(models.draft, undefined);
      assert.equal(models.paths.draft, null);
      assert.equal(models.warnings.length, 1, models.warnings.join('\n'));
      const w = models.warnings[0]!;
      assert.match(w, /cannot write the self-draft model to .*self-draft-q4_0\.gguf/);
      assert.match(w, /\(the disk is full\)/);
      assert.match(w, /No space left on device/);
      assert.match(w, /speculation goes on without a draft model/);
      assert.equal(fs.existsSync(partial), false, 'the partial file is removed');
      assert.equal(fs.existsSync(selfDraftFile(bundled)), false);
      assert.ok(models.target.tokenize('x = 1', false, false).length > 0);
    } finally {
      models.target.free();
    }
  });

  it('a 64 KiB tmpfs as the cache: the same warning, the tmpfs left empty', async function () {
    const mounted = spawnSync('mount', ['-t', 'tmpfs', '-o', 'size=64k', 'tmpfs', cache]);
    if (mounted.status !== 0) skipBecause(this, 'cannot mount a tmpfs here (needs root)');
    try {
      const models = await loadModels(
        loadAddon(),
        { model: bundled, draft: 'self' },
        { threads: 2, backend: 'cpu' },
      );
      models.target.free();
      assert.equal(models.draft, undefined);
      assert.match(models.warnings[0] ?? '', /\(the disk is full\).*No space left on device/);
      assert.deepEqual(fs.readdirSync(cache), []);
    } finally {
      spawnSync('umount', [cache]);
    }
  });

  it('leapfrog generate --draft self warns on stderr and still generates', function () {
    const cli = process.env.LEAPFROG_TEST_CLI ?? cliPath;
    if (!process.env.LEAPFROG_TEST_CLI && !fs.existsSync(path.join(repoRoot, 'dist', 'cli.js'))) {
      skipBecause(this, 'dist/cli.js missing (run `npm run build:js`)');
    }
    fs.symlinkSync('/dev/full', `${selfDraftFile(bundled)}.partial`);
    const r = spawnSync(
      process.execPath,
      [cli, 'generate', '--model', bundled, '--draft', 'self', '--prompt', 'def f(', '--json'],
      { encoding: 'utf8', env: process.env, timeout: 60_000 },
    );
    assert.equal(r.status, 0, r.stderr);
    assert.match(r.stderr, /^leapfrog: warning: cannot write the self-draft model .*disk is full/m);
    assert.ok(JSON.parse(r.stdout).tokens.length > 0, r.stdout);
  });
});
