// `npm run bench`: the speed benchmark (not a test). Builds the two benchmark tools when
// they are missing or older than their sources, then runs test/bench/run.ts with tsx;
// every argument is passed on (see that file: --quick, --sections, --models, --reps, ...).
// Prints a table and writes JSON to bench-results/ (git-ignored).
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const build = join(root, 'native', 'build');

function stale(tool) {
  const bin = join(build, tool);
  const src = join(root, 'native', 'tools', `${tool}.cpp`);
  const lib = join(build, 'libleapfrog_core.a');
  if (!existsSync(bin)) return true;
  const t = statSync(bin).mtimeMs;
  return statSync(src).mtimeMs > t || (existsSync(lib) && statSync(lib).mtimeMs > t);
}

if (!existsSync(join(build, 'CMakeCache.txt'))) {
  execFileSync(process.execPath, [join(root, 'native', 'build.mjs')], { stdio: 'inherit' });
}
const tools = ['lf_bench', 'lf_roofline'];
if (tools.some(stale) || process.argv.includes('--rebuild')) {
  // Re-run the configure step so new tools/*.cpp files get targets, then build only the tools
  // (and the core library they link).
  execFileSync('cmake', ['-S', join(root, 'native'), '-B', build], {
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  for (const t of tools)
    execFileSync('cmake', ['--build', build, '--target', t, '-j2'], { stdio: 'inherit' });
}
const tsx = join(root, 'node_modules', '.bin', 'tsx');
const args = process.argv.slice(2).filter((a) => a !== '--rebuild');
const r = spawnSync(tsx, [join(root, 'test', 'bench', 'run.ts'), ...args], {
  stdio: 'inherit',
  cwd: root,
});
process.exit(r.status ?? 1);
