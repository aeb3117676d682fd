// Installs a real VS Code for the end-to-end tests and `npm start`: code-server 4.100.3 (VS Code
// 1.100.3 with a Node extension host, the newest release that runs on Node 20) plus
// playwright-core, into the git-ignored `.vscode-e2e/`, offline-friendly (see
// ../shared/notes/vscode-e2e.md). Debian's `chromium`, `libkrb5-dev` and `ripgrep` must be
// installed first (`apt-get install -y chromium libkrb5-dev ripgrep`).
//
// Usage: node scripts/e2e-setup.mjs [--no-playwright]   (idempotent; quick when done)
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync, copyFileSync } from 'node:fs';

import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const CODE_SERVER_VERSION = '4.100.3';
export const root = join(dirname(fileURLToPath(import.meta.url)), '..');
export const e2eDir = join(root, '.vscode-e2e');
export const codeServerBin = join(e2eDir, 'node_modules', 'code-server', 'out', 'node', 'entry.js');
export const chromiumPath = '/usr/bin/chromium';

/** Debian packages the setup cannot install by itself (it is not allowed to run apt-get). */
export function missingSystemPackages() {
  const missing = [];
  if (!existsSync(chromiumPath)) missing.push('chromium');
  if (!existsSync('/usr/bin/rg')) missing.push('ripgrep');
  // libkrb5-dev provides the headers that code-server's kerberos dependency compiles against.
  if (!existsSync('/usr/include/gssapi/gssapi.h') && !existsSync('/usr/include/krb5.h'))
    missing.push('libkrb5-dev');
  return missing;
}

/**
 * Installs the missing Debian packages when running as root (a fresh machine, CI), so the
 * README's two commands need nothing else; otherwise leaves them for the caller to report.
 */
export function installSystemPackages() {
  const missing = missingSystemPackages();
  if (missing.length === 0 || process.getuid?.() !== 0) return missingSystemPackages();
  console.log(`Installing Debian packages: ${missing.join(' ')} (once)…`);
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  spawnSync('apt-get', ['update', '-qq'], { stdio: 'inherit', env });
  spawnSync('apt-get', ['install', '-y', '-qq', '--no-install-recommends', ...missing], {
    stdio: 'inherit',
    env,
  });
  return missingSystemPackages();
}

/** True when code-server (and its VS Code payload) is installed and usable. */
export function codeServerInstalled() {
  return (
    existsSync(codeServerBin) &&
    existsSync(join(e2eDir, 'node_modules', 'code-server', 'lib', 'vscode', 'node_modules')) &&
    existsSync(join(e2eDir, '.installed'))
  );
}

export function playwrightInstalled() {
  return existsSync(join(e2eDir, 'node_modules', 'playwright-core', 'package.json'));
}

function run(cmd, args, opts) {
  console.log(`e2e-setup: ${cmd} ${args.join(' ')}`);
  const r = spawnSync(cmd, args, { stdio: 'inherit', ...opts });
  if (r.status !== 0) throw new Error(`${cmd} ${args.join(' ')} failed (exit ${r.status})`);
}

/**
 * @vscode/ripgrep downloads a binary in its postinstall; it takes a pre-seeded cache instead,
 * so we pack Debian's /usr/bin/rg under the exact name it looks for.
 */
function seedRipgrepCache(tmp) {
  const cache = join(tmp, 'vscode-ripgrep-cache-1.15.11');
  mkdirSync(cache, { recursive: true });
  const stage = mkdtempSync(join(tmp, 'rg-'));
  copyFileSync('/usr/bin/rg', join(stage, 'rg'));
  for (const name of [
    'ripgrep-v13.0.0-10-x86_64-unknown-linux-musl.tar.gz',
    'ripgrep-v13.0.0-10-aarch64-unknown-linux-gnu.tar.gz',
    'ripgrep-v13.0.0-10-aarch64-unknown-linux-musl.tar.gz',
  ])
    run('tar', ['-czf', join(cache, name), '-C', stage, 'rg']);
}

export function setup({ playwright = true } = {}) {
  const missing = installSystemPackages();
  if (missing.length > 0) {
    throw new Error(
      `missing Debian packages: ${missing.join(' ')} — run: apt-get update && apt-get install -y chromium libkrb5-dev ripgrep`,
    );
  }
  mkdirSync(e2eDir, { recursive: true });
  const pkgs = [];
  if (!codeServerInstalled()) pkgs.push(`code-server@${CODE_SERVER_VERSION}`);
  if (playwright && !playwrightInstalled()) pkgs.push('playwright-core@1');
  if (pkgs.length === 0) {
    console.log('e2e-setup: code-server and playwright-core already installed in .vscode-e2e/');
    return;
  }
  // Its own package.json so that this folder never becomes part of the extension's tree.
  if (!existsSync(join(e2eDir, 'package.json')))
    writeFileSync(
      join(e2eDir, 'package.json'),
      JSON.stringify({ name: 'leapfrog-e2e', private: true }, null, 2),
    );
  const tmp = join(e2eDir, 'tmp');
  mkdirSync(tmp, { recursive: true });
  seedRipgrepCache(tmp);
  const env = {
    ...process.env,
    TMPDIR: tmp,
    // As root, code-server's postinstall only runs with unsafe-perm; node-pty calls `npx
    // node-gyp`, which must not stop to ask.
    npm_config_unsafe_perm: 'true',
    npm_config_yes: 'true',
    npm_config_fund: 'false',
    npm_config_audit: 'false',
    npm_config_update_notifier: 'false',
  };
  run('npm', ['install', '--foreground-scripts', ...pkgs], { cwd: e2eDir, env });
  // npm may skip a dependency's install script (newer npm asks for approval); code-server's
  // postinstall is what installs VS Code's own node_modules, so run it by hand when missing.
  const cs = join(e2eDir, 'node_modules', 'code-server');
  if (
    pkgs.some((p) => p.startsWith('code-server')) &&
    !existsSync(join(cs, 'lib', 'vscode', 'node_modules'))
  ) {
    run('sh', ['./postinstall.sh'], { cwd: cs, env });
  }
  if (pkgs.some((p) => p.startsWith('code-server')))
    writeFileSync(join(e2eDir, '.installed'), `${CODE_SERVER_VERSION}\n`);
  rmSync(tmp, { recursive: true, force: true });
  console.log('e2e-setup: done');
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  try {
    setup({ playwright: !process.argv.includes('--no-playwright') });
  } catch (e) {
    console.error(`e2e-setup: error: ${e instanceof Error ? e.message : e}`);
    process.exit(1);
  }
}
