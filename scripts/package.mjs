// `npm run package`: one platform-specific .vsix per target this machine can build
// (`vsce package --target …`): linux-x64 always, linux-arm64 where g++-aarch64-linux-gnu is
// installed (its addon cross-compiled into native/build-arm64-addon/). Each holds the bundled
// JavaScript (dist/), its own addon only (dist/native/<target>/leapfrog_native.node, where
// engine/native/load-addon.ts looks), the bundled models, media and grammar; .vscodeignore
// keeps everything else out. Prints each package's size.
//   node scripts/package.mjs [--target linux-x64,linux-arm64] [--out-dir DIR] [--skip-build]
// Not built here: win32-x64 (no mingw-w64 or Wine on this machine), darwin-* (see README).
import { spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { bundledModels, root, targets, vsixPath } from './packaging/targets.mjs';

const argv = process.argv.slice(2);
const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
const option = (name) => {
  const at = argv.indexOf(name);
  return at >= 0 ? argv[at + 1] : undefined;
};
const outDir = option('--out-dir') ?? root;
const only = option('--target')?.split(',');

function fail(message) {
  console.error(`leapfrog: error: ${message}`);
  process.exit(1);
}

function run(cmd, args) {
  const r = spawnSync(cmd, args, { cwd: root, stdio: 'inherit' });
  if (r.status !== 0) fail(`${cmd} ${args.join(' ')} failed (exit ${r.status})`);
}

const known = targets();
for (const name of only ?? [])
  if (!known.some((t) => t.name === name))
    fail(`unknown target ${name} (known: ${known.map((t) => t.name).join(', ')})`);
const wanted = known.filter((t) => (only ? only.includes(t.name) : true));

if (!argv.includes('--skip-build')) run(process.execPath, [join(root, 'scripts', 'bundle.mjs')]);
for (const f of ['dist/extension.js', 'dist/cli.js'])
  if (!existsSync(join(root, f))) fail(`${f} is missing; run \`npm run build\``);
for (const m of bundledModels)
  if (!existsSync(join(root, m)))
    console.warn(`leapfrog: warning: ${m} is missing; the packages will not carry it`);

const vsce = join(root, 'node_modules', '@vscode', 'vsce', 'vsce');
if (!existsSync(vsce)) fail('@vscode/vsce is not installed; run `npm install`');
mkdirSync(outDir, { recursive: true });

const made = [];
for (const t of wanted) {
  if (t.unavailable) {
    // Asked for by name: an error; by default: said, and the others are still made.
    if (only) fail(`cannot build ${t.name}: ${t.unavailable}`);
    console.warn(`leapfrog: warning: skipping ${t.name}: ${t.unavailable}`);
    continue;
  }
  if (t.name === 'linux-arm64' && !argv.includes('--skip-build'))
    run(process.execPath, [join(root, 'scripts', 'packaging', 'build-arm64-addon.mjs')]);
  if (!existsSync(t.addon)) fail(`${t.addon} is missing; run \`npm run build\``);
  // Only this target's addon may be in dist/native/ while vsce collects the files.
  const nativeDir = join(root, 'dist', 'native');
  rmSync(nativeDir, { recursive: true, force: true });
  mkdirSync(join(nativeDir, t.name), { recursive: true });
  copyFileSync(t.addon, join(nativeDir, t.name, 'leapfrog_native.node'));
  const out = vsixPath(pkg, t.name, outDir);
  run(process.execPath, [
    vsce,
    'package',
    '--target',
    t.name,
    '--no-dependencies', // everything the extension runs is bundled into dist/
    // README images are in the package (media/screenshots/); keep their links relative
    // rather than point them at a repository URL that may not serve them.
    '--no-rewrite-relative-links',
    '--allow-star-activation',
    '--out',
    out,
  ]);
  made.push(out);
}
rmSync(join(root, 'dist', 'native'), { recursive: true, force: true });
for (const out of made) {
  const mb = statSync(out).size / (1024 * 1024);
  console.log(`packaged ${out} (${mb.toFixed(1)} MiB)`);
}
