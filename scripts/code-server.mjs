// Starts code-server (installed by scripts/e2e-setup.mjs) on 127.0.0.1 with this repository
// as an installed extension (a symlink in a fresh extensions folder, or — with `vsix` — a
// package installed by code-server's own --install-extension, as a user would) and every writable path
// (settings, caches, temp) inside one folder, so runs never touch the user's own VS Code.
// Used by `npm start` (scripts/start-vscode.mjs) and the end-to-end tests.
import { spawn, spawnSync } from 'node:child_process';
import {
  createWriteStream,
  mkdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { get } from 'node:http';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { codeServerBin, root } from './e2e-setup.mjs';

export function freePort() {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.unref();
    s.on('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = /** @type {import('node:net').AddressInfo} */ (s.address());
      s.close(() => resolve(port));
    });
  });
}

function ping(url) {
  return new Promise((resolve) => {
    const req = get(url, (res) => {
      res.resume();
      resolve((res.statusCode ?? 0) < 500);
    });
    req.on('error', () => resolve(false));
    req.setTimeout(1000, () => {
      req.destroy();
      resolve(false);
    });
  });
}

const BASE_SETTINGS = {
  'workbench.startupEditor': 'none',
  'workbench.tips.enabled': false,
  'workbench.enableExperiments': false,
  'extensions.autoUpdate': false,
  'extensions.autoCheckUpdates': false,
  'telemetry.telemetryLevel': 'off',
  'update.mode': 'none',
  'chat.disableAIFeatures': true,
  'security.workspace.trust.enabled': false,
  'editor.inlineSuggest.enabled': true,
  'git.enabled': false,
};

/**
 * @param {{dir: string, workspace: string, port?: number, settings?: Record<string, unknown>,
 *   extensionPath?: string, vsix?: string, fresh?: boolean, log?: string}} o
 */
export async function startCodeServer(o) {
  const extensionPath = o.extensionPath ?? root;
  if (o.fresh) rmSync(o.dir, { recursive: true, force: true });
  const d = (name) => {
    const p = join(o.dir, name);
    mkdirSync(p, { recursive: true });
    return p;
  };
  const userData = d('user-data');
  const exts = d('extensions');
  if (o.vsix) {
    const r = spawnSync(
      process.execPath,
      [
        codeServerBin,
        '--extensions-dir',
        exts,
        '--user-data-dir',
        userData,
        '--install-extension',
        o.vsix,
      ],
      { encoding: 'utf8', timeout: 120_000 },
    );
    if (r.status !== 0) {
      throw new Error(`code-server --install-extension ${o.vsix} failed: ${r.stderr || r.stdout}`);
    }
  } else {
    const pkg = JSON.parse(readFileSync(join(extensionPath, 'package.json'), 'utf8'));
    const link = join(exts, `${pkg.publisher}.${pkg.name}-${pkg.version}`);
    rmSync(link, { force: true, recursive: false });
    symlinkSync(extensionPath, link, 'dir');
  }
  mkdirSync(join(userData, 'User'), { recursive: true });
  writeFileSync(
    join(userData, 'User', 'settings.json'),
    JSON.stringify({ ...BASE_SETTINGS, ...(o.settings ?? {}) }, null, 2),
  );
  const port = o.port ?? (await freePort());
  const env = {
    ...process.env,
    XDG_CONFIG_HOME: d('xdg-config'),
    XDG_DATA_HOME: d('xdg-data'),
    XDG_CACHE_HOME: d('xdg-cache'),
    XDG_RUNTIME_DIR: d('xdg-runtime'),
    TMPDIR: d('tmp'),
    // code-server would otherwise inherit a VS Code session's IPC hooks from the parent.
    VSCODE_IPC_HOOK_CLI: '',
  };
  const args = [
    codeServerBin,
    '--bind-addr',
    `127.0.0.1:${port}`,
    '--auth',
    'none',
    '--disable-telemetry',
    '--disable-update-check',
    '--disable-workspace-trust',
    '--disable-getting-started-override',
    '--user-data-dir',
    userData,
    '--extensions-dir',
    exts,
    o.workspace,
  ];
  const proc = spawn(process.execPath, args, { env, stdio: ['ignore', 'pipe', 'pipe'] });
  const logPath = o.log ?? join(o.dir, 'code-server.log');
  const log = createWriteStream(logPath);
  proc.stdout.pipe(log);
  proc.stderr.pipe(log);
  const url = `http://127.0.0.1:${port}/`;
  const deadline = Date.now() + 30_000;
  while (!(await ping(url))) {
    if (proc.exitCode !== null)
      throw new Error(`code-server exited (${proc.exitCode}); see ${logPath}`);
    if (Date.now() > deadline) {
      proc.kill();
      throw new Error(`code-server did not answer on ${url} within 30 s; see ${logPath}`);
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  return {
    url,
    port,
    proc,
    userData,
    logPath,
    /** Ends code-server (by its PID) and waits for it. */
    stop: () =>
      new Promise((resolve) => {
        if (proc.exitCode !== null) return resolve(undefined);
        proc.once('exit', () => resolve(undefined));
        proc.kill('SIGTERM');
        setTimeout(() => proc.exitCode === null && proc.kill('SIGKILL'), 5000).unref();
      }),
  };
}
