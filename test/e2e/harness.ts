// Shared plumbing for the end-to-end suite: decides whether it can run here (and says why
// not), starts code-server with the extension and a scratch workspace, opens Debian Chromium
// through playwright-core, and offers the few UI moves a person makes (open a file, type, run
// a command, look at the status bar).
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import type { Browser, FrameLocator, Locator, Page } from 'playwright-core';

export const root = join(__dirname, '..', '..');
export const artifacts = join(root, 'test', '.artifacts');
const e2eDir = join(root, '.vscode-e2e');
const codeServerEntry = join(e2eDir, 'node_modules', 'code-server', 'out', 'node', 'entry.js');
const chromium = '/usr/bin/chromium';
const bundledModel = join(root, 'models', 'leapfrog-coder.gguf');
const fallbackModel = join(root, '..', 'shared', 'data', 'models', 'stories260K.gguf');

/**
 * The browser as a desktop user's: this VM runs it as root, and Chromium then raises its
 * browser, GPU and compositor threads to nice −8, which a user's browser or VS Code window
 * cannot (no CAP_SYS_NICE); at −8 they win every contest for a core against the extension
 * host, whose longest blocks here were its thread waiting for a CPU (BENCHMARKS.md, session 10).
 * `setpriv` drops the capability for Chromium alone; without setpriv, or not as root, as is.
 */
function browserExecutable(): string {
  if (process.getuid?.() !== 0 || !existsSync('/usr/bin/setpriv')) return chromium;
  const wrapper = join(e2eDir, 'chromium-without-sys-nice.sh');
  writeFileSync(
    wrapper,
    `#!/bin/sh\nexec /usr/bin/setpriv --bounding-set -sys_nice ${chromium} "$@"\n`,
    { mode: 0o755 },
  );
  return wrapper;
}

/** The model the suite runs on: the bundled one; a tiny shared model until it exists. */
export function modelSetting(): string | undefined {
  if (existsSync(bundledModel)) return undefined;
  if (process.env.LEAPFROG_E2E_MODEL) return process.env.LEAPFROG_E2E_MODEL;
  return existsSync(fallbackModel) ? fallbackModel : undefined;
}

/** Why the suite cannot run here, or undefined when it can. */
export function skipReason(): string | undefined {
  if (!existsSync(chromium))
    return 'Debian chromium is not installed (apt-get install -y chromium)';
  if (!existsSync(codeServerEntry) || !existsSync(join(e2eDir, '.installed')))
    return 'code-server is not installed in .vscode-e2e/ (run `node scripts/e2e-setup.mjs`)';
  if (!existsSync(join(root, 'dist', 'cli.js')) || !existsSync(join(root, 'dist', 'extension.js')))
    return 'dist/ is not built (run `npm run build`)';
  const addon =
    ['native/build/leapfrog_native.node', 'dist/leapfrog_native.node'].some((p) =>
      existsSync(join(root, p)),
    ) ||
    (!!process.env.LEAPFROG_ADDON && existsSync(process.env.LEAPFROG_ADDON));
  if (!addon) return 'the native addon is not built (run `npm run build`)';
  if (!existsSync(bundledModel) && !modelSetting()) return `no model: ${bundledModel} is missing`;
  try {
    loadPlaywright();
  } catch {
    return 'playwright-core is not installed (npm install, or node scripts/e2e-setup.mjs)';
  }
  return undefined;
}

function loadPlaywright(): typeof import('playwright-core') {
  // From the repository's devDependencies, else from the setup folder.
  for (const base of [join(root, 'package.json'), join(e2eDir, 'package.json')]) {
    try {
      return createRequire(base)('playwright-core') as typeof import('playwright-core');
    } catch {
      // try the next place
    }
  }
  throw new Error('playwright-core not found');
}

export interface Session {
  page: Page;
  browser: Browser;
  url: string;
  workspace: string;
  settingsPath: string;
  codeServerPid: number;
  stop(): Promise<void>;
}

interface CodeServerHandle {
  url: string;
  userData: string;
  logPath: string;
  proc: { pid?: number };
  stop(): Promise<void>;
}

/** Starts code-server + Chromium on a fresh copy of `files`, and waits for the workbench. */
export async function launch(
  name: string,
  files: Record<string, string>,
  settings: Record<string, unknown> = {},
  install: { vsix?: string } = {},
): Promise<Session> {
  const dir = join(e2eDir, 'runs', name);
  rmSync(dir, { recursive: true, force: true });
  const workspace = join(dir, 'workspace');
  mkdirSync(workspace, { recursive: true });
  for (const [f, text] of Object.entries(files)) writeFileSync(join(workspace, f), text);
  const model = modelSetting();
  const cs = (await import(join(root, 'scripts', 'code-server.mjs'))) as {
    startCodeServer(o: object): Promise<CodeServerHandle>;
  };
  const server = await cs.startCodeServer({
    dir,
    workspace,
    vsix: install.vsix,
    settings: {
      ...(model ? { 'leapfrog.model': model } : {}),
      // Quiet editor: no word-based suggestions popping over the ghost text.
      'editor.quickSuggestions': { other: false, comments: false, strings: false },
      'editor.suggestOnTriggerCharacters': false,
      'workbench.colorTheme': 'Default Dark Modern',
      ...settings,
    },
  });
  const pw = loadPlaywright();
  const browser = await pw.chromium.launch({
    executablePath: browserExecutable(),
    headless: true,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
  const context = await browser.newContext({ viewport: { width: 1400, height: 860 } });
  const page = await context.newPage();
  await page.goto(`${server.url}?folder=${encodeURIComponent(workspace)}`);
  await page.locator('.monaco-workbench').waitFor({ timeout: 60_000 });
  return {
    page,
    browser,
    url: server.url,
    workspace,
    settingsPath: join(server.userData, 'User', 'settings.json'),
    codeServerPid: server.proc.pid ?? -1,
    async stop() {
      await browser.close().catch(() => undefined);
      await server.stop();
    },
  };
}

/**
 * The window's user settings as they are on disk now. VS Code rewrites settings.json in
 * place (truncate, then write), so a poll can catch it empty or half written: that reads as
 * "not yet" ({}), and the caller polls again.
 */
export function readUserSettings(s: Session): Record<string, unknown> {
  try {
    return JSON.parse(readFileSync(s.settingsPath, 'utf8')) as Record<string, unknown>;
  } catch {
    return {};
  }
}

export function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}

/** Runs a command by its palette title, as a person would (F1, type, Enter). */
export async function runCommand(page: Page, title: string): Promise<void> {
  await page.keyboard.press('F1');
  const input = page.locator('.quick-input-widget input');
  await input.waitFor();
  await input.fill(`>${title}`);
  await page
    .locator('.quick-input-list .monaco-list-row', { hasText: title })
    .first()
    .waitFor({ timeout: 10_000 });
  await page.keyboard.press('Enter');
}

/**
 * The notification that says `text`: a toast, or — where VS Code holds toasts back (several
 * already showing, or the centre was opened) — the entry in the notification centre, which is
 * opened when no toast has come after `toastMs`. Throws Playwright's timeout after `timeoutMs`.
 */
export async function findNotification(
  page: Page,
  text: string,
  timeoutMs: number,
  toastMs = 5_000,
): Promise<Locator> {
  const item = page.locator('.notification-list-item', { hasText: text }).first();
  const start = Date.now();
  let opened = false;
  while (Date.now() - start < timeoutMs) {
    if (await item.isVisible().catch(() => false)) return item;
    if (!opened && Date.now() - start > toastMs) {
      await runCommand(page, 'Notifications: Show Notifications');
      opened = true;
    }
    await sleep(200);
  }
  await item.waitFor({ timeout: 1_000 });
  return item;
}

/** Opens a workspace file with Quick Open and puts the cursor at its end. */
export async function openFile(page: Page, name: string): Promise<void> {
  // Keys typed while a webview has focus stay in the webview: give the workbench focus first.
  const lines = page.locator('.editor-instance .monaco-editor .view-lines').first();
  if (await lines.isVisible().catch(() => false)) await lines.click();
  await page.keyboard.press('Control+P');
  const input = page.locator('.quick-input-widget input');
  await input.waitFor();
  await input.fill(name);
  const row = page.locator('.quick-input-list .monaco-list-row', { hasText: name }).first();
  await row.waitFor({ timeout: 10_000 });
  await row.click();
  await page.locator('.tab.active', { hasText: name }).first().waitFor({ timeout: 10_000 });
  await page.locator('.editor-instance .monaco-editor .view-lines').first().click();
  await page.keyboard.press('Control+End');
}

/** VS Code gives a status-bar entry the id `<extension id>.<item id>`. */
const STATUS_ITEM = '[id="leapfrog.leapfrog.leapfrog.status"]';

/** The Leapfrog status-bar item's text. */
export async function statusText(page: Page): Promise<string> {
  const item = page.locator(STATUS_ITEM);
  return ((await item.textContent({ timeout: 5000 }).catch(() => '')) ?? '').trim();
}

/** Waits until the status bar says the engine is ready (not starting, not in error). */
export async function waitReady(page: Page, timeoutMs = 90_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let last = '';
  while (Date.now() < deadline) {
    last = await statusText(page);
    const item = page.locator(STATUS_ITEM);
    const label = (await item.getAttribute('aria-label').catch(() => '')) ?? '';
    if (/Leapfrog (ready|busy)/.test(label)) return;
    await sleep(250);
  }
  throw new Error(`engine not ready after ${timeoutMs} ms; status bar: "${last}"`);
}

/** The chat webview's page (inside VS Code's two nested iframes). */
export function chatFrame(page: Page): FrameLocator {
  return page
    .frameLocator('iframe.webview[src*="extensionId=leapfrog.leapfrog"]')
    .frameLocator('#active-frame');
}

export async function openChat(page: Page): Promise<FrameLocator> {
  const frame = chatFrame(page);
  const input = frame.locator('#input');
  // Clicking the icon of an open container closes it again, so look before each click.
  for (let i = 0; i < 3; i++) {
    if (await input.isVisible().catch(() => false)) return frame;
    await page.locator('.activitybar [aria-label^="Leapfrog"]').first().click();
    await input.waitFor({ state: 'visible', timeout: 8000 }).catch(() => undefined);
  }
  await input.waitFor({ state: 'visible', timeout: 15_000 });
  return frame;
}

/** The ghost text now shown in the editor (all of its lines), or '' when none. */
export async function ghostText(page: Page): Promise<string> {
  // Runs in the page (a string, because this file is type-checked without the DOM library).
  return page.evaluate<string>(`(() => {
    if (!document.querySelector('.ghost-text-decoration')) return '';
    return [...document.querySelectorAll('.ghost-text-decoration, .ghost-text .view-line')]
      .map((e) => (e.textContent ?? '').replace(/\\u00a0/g, ' ')).join('\\n');
  })()`);
}

export async function waitGhost(page: Page, timeoutMs = 30_000): Promise<string> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const t = await ghostText(page);
    if (t.trim()) return t;
    await sleep(100);
  }
  return '';
}

/** PIDs of sidecars (`… dist/cli.js lsp --stdio`) that descend from one code-server. */
export function sidecarPids(codeServerPid: number): number[] {
  const parents = new Map<number, number>();
  const cmds = new Map<number, string>();
  for (const d of readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    try {
      const stat = readFileSync(`/proc/${d}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      parents.set(Number(d), ppid);
      cmds.set(Number(d), readFileSync(`/proc/${d}/cmdline`, 'utf8').split('\0').join(' '));
    } catch {
      // the process ended while we looked
    }
  }
  const descends = (pid: number) => {
    for (let p = pid, n = 0; p > 1 && n < 50; p = parents.get(p) ?? 0, n++)
      if (p === codeServerPid) return true;
    return false;
  };
  return [...cmds]
    .filter(([pid, cmd]) => /dist\/cli\.js lsp --stdio/.test(cmd) && descends(pid))
    .map(([pid]) => pid);
}

export async function screenshot(page: Page, name: string): Promise<string> {
  mkdirSync(artifacts, { recursive: true });
  const path = join(artifacts, `${name}.png`);
  await page.screenshot({ path });
  return path;
}

/** Changes a user setting through the Settings editor, as a person would. */
export async function setSetting(
  page: Page,
  key: string,
  description: string,
  value: string,
): Promise<void> {
  await runCommand(page, 'Preferences: Open User Settings');
  const search = page
    .locator(
      '.settings-editor .suggest-input-container textarea, .settings-editor .search-container input',
    )
    .first();
  await search.waitFor({ timeout: 15_000 });
  await search.focus();
  await page.keyboard.type(key);
  const input = page
    .locator('.settings-editor .setting-item-contents', { hasText: description })
    .locator('input')
    .first();
  await input.waitFor({ timeout: 15_000 }).catch(async (e: unknown) => {
    await screenshot(page, 'settings-failure');
    throw e;
  });
  await input.fill(value);
  await input.press('Tab');
  await sleep(1000); // the Settings editor writes a moment after the last keystroke
  await page.keyboard.press('Control+W');
}
