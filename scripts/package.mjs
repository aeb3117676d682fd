// `npm run package`: builds the .vsix with @vscode/vsce — the bundled JavaScript (dist/), the
// native addon for this platform (copied next to dist/ so the bundle finds it), the bundled
// models, media and grammar; .vscodeignore keeps everything else out. Prints the size.
//   node scripts/package.mjs [--out file.vsix] [--skip-build]
import { spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(fileURLToPath(new URL('.', import.meta.url)), '..');
const argv = process.argv.slice(2);
const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
const outAt = argv.indexOf('--out');
const out = outAt >= 0 ? argv[outAt + 1] : join(root, `${pkg.name}-${pkg.version}.vsix`);

function fail(message) {
  console.error(`leapfrog: error: ${message}`);
  process.exit(1);
}

function run(cmd, args) {
  const r = spawnSync(cmd, args, { cwd: root, stdio: 'inherit' });
  if (r.status !== 0) fail(`${cmd} ${args.join(' ')} failed (exit ${r.status})`);
}

if (!argv.includes('--skip-build')) run(process.execPath, [join(root, 'scripts', 'bundle.mjs')]);
for (const f of ['dist/extension.js', 'dist/cli.js'])
  if (!existsSync(join(root, f))) fail(`${f} is missing; run \`npm run build\``);

// LEAPFROG_ADDON overrides, as it does for engine/native/load-addon.ts.
const addon = process.env.LEAPFROG_ADDON || join(root, 'native', 'build', 'leapfrog_native.node');
if (!existsSync(addon)) fail(`${addon} is missing; run \`npm run build\``);
// engine/native/load-addon.ts looks beside the bundle first.
copyFileSync(addon, join(root, 'dist', 'leapfrog_native.node'));

for (const m of ['models/leapfrog-coder.gguf', 'models/leapfrog-coder-draft.gguf'])
  if (!existsSync(join(root, m)))
    console.warn(`leapfrog: warning: ${m} is missing; the .vsix will not carry it`);

const vsce = join(root, 'node_modules', '@vscode', 'vsce', 'vsce');
if (!existsSync(vsce)) fail('@vscode/vsce is not installed; run `npm install`');
run(process.execPath, [
  vsce,
  'package',
  '--no-dependencies', // everything the extension runs is bundled into dist/
  '--allow-missing-repository',
  // README images are relative to the repository; keep them so rather than guess a URL.
  '--no-rewrite-relative-links',
  '--skip-license',
  '--allow-star-activation',
  '--out',
  out,
]);
const mb = statSync(out).size / (1024 * 1024);
console.log(`packaged ${out} (${mb.toFixed(1)} MiB)`);
