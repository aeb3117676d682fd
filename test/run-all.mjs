// Runs every test suite and ends on one summary line, "N passed, N failed, N skipped", then
// the names of what failed.
// Suites: the C++ tests (native/build/*_test), the same tests cross-compiled for arm64 under
// qemu (arm64), the mocha suites (unit, native, protocol, e2e), and the training recipe's
// dry run. Exit code 1 when anything failed.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const root = new URL('..', import.meta.url).pathname;
const totals = { passed: 0, failed: 0, skipped: 0 };
// What failed, suite by suite, repeated after the summary line: CI shows only the tail of a
// long run, and a failure named there needs no second run to find.
const failures = [];
const only = process.argv.slice(2); // optional suite names to run

// Every model the suites load writes its packed-weight cache (native/src/backend/cpu/
// packed_cache.h): into a directory of this run, removed at the end, never the user's
// ~/.cache. A directory given in LEAPFROG_CACHE_DIR is used as it is and kept.
let testCacheDir;
if (!process.env.LEAPFROG_CACHE_DIR) {
  testCacheDir = mkdtempSync(join(tmpdir(), 'leapfrog-test-cache-'));
  process.env.LEAPFROG_CACHE_DIR = testCacheDir;
}

function wanted(name) {
  return only.length === 0 || only.includes(name);
}

function report(name, counts, ok, failedLines = []) {
  if (counts.failed > 0 || !ok) {
    failures.push(
      `[${name}]`,
      ...(failedLines.length ? failedLines : ['  (see its output above)']),
    );
  }
  totals.passed += counts.passed;
  totals.failed += counts.failed + (ok || counts.failed > 0 ? 0 : 1);
  totals.skipped += counts.skipped;
  const crash = ok || counts.failed > 0 ? '' : ' (suite exited non-zero)';
  console.log(
    `[${name}] ${counts.passed} passed, ${counts.failed} failed, ${counts.skipped} skipped${crash}`,
  );
}

function run(cmd, args, opts = {}) {
  const r = spawnSync(cmd, args, {
    cwd: root,
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'pipe'],
    ...opts,
  });
  process.stdout.write(r.stdout ?? '');
  process.stderr.write(r.stderr ?? '');
  return { out: `${r.stdout ?? ''}\n${r.stderr ?? ''}`, ok: r.status === 0 };
}

function nativeSuites() {
  const dir = join(root, 'native/build');
  if (!existsSync(dir)) {
    console.log('[native] native/build missing: run `npm run build` first');
    report('native', { passed: 0, failed: 1, skipped: 0 }, false);
    return;
  }
  for (const f of readdirSync(dir)
    .filter((n) => n.endsWith('_test'))
    .sort()) {
    const path = join(dir, f);
    if (!statSync(path).isFile()) continue;
    const { out, ok } = run(path, []);
    const m = out.match(/# passed (\d+) failed (\d+) skipped (\d+)/);
    const counts = m
      ? { passed: +m[1], failed: +m[2], skipped: +m[3] }
      : { passed: 0, failed: 0, skipped: 0 };
    const notOk = out.split('\n').filter((l) => l.startsWith('not ok'));
    report(
      `native:${f}`,
      counts,
      ok && !!m,
      notOk.map((l) => `  ${l}`),
    );
  }
}

function onPath(cmd) {
  return (process.env.PATH ?? '').split(':').some((d) => d && existsSync(join(d, cmd)));
}

// The arm64 kernels: cross-compiled and run under qemu-aarch64 once per instruction-set level
// (scripts/test-arm64.sh), each level reported like a native test binary.
function arm64Suite() {
  const missing = ['aarch64-linux-gnu-g++', 'qemu-aarch64'].filter((t) => !onPath(t));
  if (missing.length > 0) {
    console.log(
      `[arm64] SKIP: ${missing.join(' and ')} not found (apt-get install g++-aarch64-linux-gnu qemu-user)`,
    );
    report('arm64', { passed: 0, failed: 0, skipped: 1 }, true);
    return;
  }
  const { out, ok } = run('bash', [join(root, 'scripts/test-arm64.sh')]);
  const levels = [...out.matchAll(/^## arm64 (\S+): passed (\d+) failed (\d+) skipped (\d+)$/gm)];
  for (const m of levels) {
    const notOk = out.split('\n').filter((l) => l.startsWith('not ok'));
    report(`arm64:${m[1]}`, { passed: +m[2], failed: +m[3], skipped: +m[4] }, true, notOk);
  }
  if (!ok && !levels.some((m) => +m[3] > 0)) {
    report('arm64', { passed: 0, failed: 0, skipped: 0 }, false); // build or script failure
  }
}

function mochaSuite(name, glob, extra = []) {
  const files = glob.filter((g) => existsSync(join(root, g.split('/**')[0])));
  if (files.length === 0) return;
  const { out, ok } = run(process.execPath, [
    join(root, 'node_modules/mocha/bin/mocha.js'),
    '--import=tsx',
    '--reporter',
    'spec',
    '--timeout',
    '120000',
    ...extra,
    ...files,
  ]);
  const num = (re) => +(out.match(re)?.[1] ?? 0);
  const counts = {
    passed: num(/(\d+) passing/),
    failed: num(/(\d+) failing/),
    skipped: num(/(\d+) pending/),
  };
  report(name, counts, ok, mochaFailures(out));
}

// Mocha's own account of its failures: from "N failing" on, titles and first error lines.
function mochaFailures(out) {
  const at = out.search(/\d+ failing/);
  if (at < 0) return [];
  return out
    .slice(at)
    .split('\n')
    .filter((l) => l.trim() !== '' && !/^\s+at /.test(l))
    .slice(0, 60);
}

function pythonSuite() {
  const script = join(root, 'models/train/test_dry_run.py');
  if (!existsSync(script)) return;
  const python = existsSync('/usr/bin/python3') ? '/usr/bin/python3' : 'python3';
  const { out, ok } = run(python, [script]);
  const skipped = /\bSKIP\b/.test(out);
  report(
    'training-dry-run',
    { passed: ok && !skipped ? 1 : 0, failed: 0, skipped: skipped ? 1 : 0 },
    ok,
  );
}

if (wanted('native')) nativeSuites();
if (wanted('arm64')) arm64Suite();
if (wanted('unit')) mochaSuite('unit', ['test/unit/**/*.test.ts']);
if (wanted('cli')) mochaSuite('cli', ['test/cli/**/*.test.ts']);
if (wanted('differential')) mochaSuite('differential', ['test/native/**/*.test.ts']);
if (wanted('protocol')) mochaSuite('protocol', ['test/protocol/**/*.test.ts']);
if (wanted('serve')) mochaSuite('serve', ['test/serve/**/*.test.ts']);
if (wanted('packaging')) mochaSuite('packaging', ['test/packaging/**/*.test.ts']);
if (wanted('e2e')) {
  // A real VS Code (code-server) and Chromium for the end-to-end suite, installed on first
  // use as `npm start` does (Debian packages only as root); the suite skips visibly when
  // that was not possible.
  if (!existsSync(join(root, '.vscode-e2e', 'node_modules', 'code-server'))) {
    run(process.execPath, [join(root, 'scripts', 'e2e-setup.mjs')]);
  }
  mochaSuite('e2e', ['test/e2e/**/*.test.ts']);
}
if (wanted('training')) pythonSuite();

console.log(`${totals.passed} passed, ${totals.failed} failed, ${totals.skipped} skipped`);
if (failures.length > 0) console.log(['What failed:', ...failures].join('\n'));
if (testCacheDir) rmSync(testCacheDir, { recursive: true, force: true });
process.exit(totals.failed === 0 ? 0 : 1);
