// "Leapfrog: Download Model…" in a real VS Code (code-server 4.100.3 + Chromium), as a
// person uses it: the command, the URL box, the sha256 box, the progress notification,
// "Use This Model", and the engine loading the downloaded model. The file comes from a
// real HTTP server on loopback started by this test, serving the bundled draft model (a
// real GGUF the engine can load), behind a Hugging Face style redirect that announces its
// sha256. Skips like the main e2e suite where code-server/Chromium are not installed.
import { strict as assert } from 'node:assert';
import { existsSync, mkdirSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { sha256, startFileServer, type FileServer } from '../unit/download-server';
import {
  findNotification,
  artifacts,
  launch,
  readUserSettings,
  root,
  runCommand,
  screenshot,
  skipReason,
  sleep,
  waitReady,
  type Session,
} from './harness';

/** The Leapfrog output channel of this run's windows (the sidecar's log lines included). */
function leapfrogLog(): string {
  const logs = join(root, '.vscode-e2e', 'runs', 'download', 'user-data', 'logs');
  const found: string[] = [];
  const walk = (dir: string) => {
    for (const e of readdirSync(dir, { withFileTypes: true })) {
      const p = join(dir, e.name);
      if (e.isDirectory()) walk(p);
      else if (/Leapfrog\.log$/.test(e.name)) found.push(readFileSync(p, 'utf8'));
    }
  };
  if (existsSync(logs)) walk(logs);
  return found.join('\n');
}

const servedModel = join(root, 'models', 'leapfrog-coder-draft.gguf');
const reason = skipReason() ?? (existsSync(servedModel) ? undefined : `${servedModel} is missing`);

describe('e2e: Download Model… in a real VS Code', function () {
  this.timeout(180_000);
  let s: Session;
  let server: FileServer;
  let folder: string;

  before(async function () {
    if (reason) {
      console.log(`  SKIP e2e download: ${reason}`);
      this.skip();
    }
    mkdirSync(artifacts, { recursive: true });
    server = await startFileServer(readFileSync(servedModel));
    // Where the download goes, as a user would set it (inside the run's folder, which
    // launch() wipes first).
    folder = join(root, '.vscode-e2e', 'runs', 'download', 'downloads');
    s = await launch(
      'download',
      { 'hello.py': 'print("hello")\n' },
      { 'leapfrog.downloadFolder': folder },
    );
    await waitReady(s.page);
  });

  after(async function () {
    await s?.stop();
    await server?.close();
  });

  it('downloads a Hugging Face style URL with progress, then uses the model', async () => {
    const { page } = s;
    await runCommand(page, 'Leapfrog: Download Model…');
    const input = page.locator('.quick-input-widget input');
    await input.waitFor();
    await input.fill(`${server.base}/org/repo/resolve/main/model.gguf`);
    await input.press('Enter');
    // The sha256 box: left empty (the server announces it).
    await page.locator('.quick-input-widget', { hasText: 'sha256' }).waitFor({ timeout: 10_000 });
    await input.press('Enter');
    const done = page.locator('.notifications-toasts .notification-list-item', {
      hasText: 'downloaded model.gguf',
    });
    await done.waitFor({ timeout: 60_000 });
    const text = (await done.textContent()) ?? '';
    assert.match(text, /sha256 checked against the server’s/);
    await screenshot(page, 'download-done');
    const path = join(folder, 'model.gguf');
    assert.equal(sha256(readFileSync(path)), server.sha256, 'the file in place is the served one');
    assert.ok(!existsSync(`${path}.part`));

    await done.locator('a.monaco-button', { hasText: 'Use This Model' }).click();
    const deadline = Date.now() + 20_000;
    let model = '';
    while (Date.now() < deadline) {
      model = String(readUserSettings(s)['leapfrog.model'] ?? '');
      if (model === path) break;
      await sleep(200);
    }
    assert.equal(model, path, 'leapfrog.model points at the download');
    // The engine loads it (its log says so), and is ready with it.
    const loaded = `] loaded ${path} (`; // "[info] loaded …", not "downloaded …"
    const until = Date.now() + 60_000;
    while (Date.now() < until && !leapfrogLog().includes(loaded)) await sleep(250);
    assert.ok(leapfrogLog().includes(loaded), `the engine loaded ${path}`);
    await waitReady(page);
  });

  it('shows the progress, and Cancel keeps the partial file', async () => {
    const { page } = s;
    await runCommand(page, 'Leapfrog: Download Model…');
    const input = page.locator('.quick-input-widget input');
    await input.waitFor();
    await input.fill(`${server.base}/slow.gguf`);
    await input.press('Enter');
    await page.locator('.quick-input-widget', { hasText: 'sha256' }).waitFor({ timeout: 10_000 });
    await input.press('Enter');
    const running = page.locator('.notifications-toasts .notification-list-item', {
      hasText: 'downloading slow.gguf',
    });
    await running.waitFor({ timeout: 15_000 });
    // The message counts the bytes: "… kB of 10.9 MB".
    const deadline = Date.now() + 15_000;
    let shown = '';
    while (Date.now() < deadline && !/[\d.]+ (kB|MB) of/.test(shown)) {
      shown = (await running.textContent()) ?? '';
      await sleep(100);
    }
    assert.match(shown, /[\d.]+ (kB|MB) of [\d.]+ MB/);
    await screenshot(page, 'download-progress');
    await running.locator('a.monaco-button', { hasText: 'Cancel' }).click();
    await findNotification(page, 'download cancelled', 15_000);
    const part = join(folder, 'slow.gguf.part');
    assert.ok(existsSync(part), 'the .part is kept for a resume');
    assert.ok(!existsSync(join(folder, 'slow.gguf')));
  });

  it('asks before replacing a file that is already there', async () => {
    const { page } = s;
    await runCommand(page, 'Leapfrog: Download Model…');
    const input = page.locator('.quick-input-widget input');
    await input.waitFor();
    await input.fill(`${server.base}/org/repo/resolve/main/model.gguf`);
    await input.press('Enter');
    await page.locator('.quick-input-widget', { hasText: 'sha256' }).waitFor({ timeout: 10_000 });
    await input.press('Enter');
    // The engine answers that the file exists; the extension asks what to do. The toasts of
    // the tests before may hold this one back: findNotification also looks in the centre.
    const ask = await findNotification(page, 'already exists', 30_000).catch((err: Error) => {
      const tail = leapfrogLog().split('\n').slice(-15).join('\n');
      throw new Error(`${err.message}\nthe Leapfrog log ends:\n${tail}`);
    });
    assert.equal(await ask.locator('a.monaco-button', { hasText: 'Replace It' }).count(), 1);
    assert.equal(await ask.locator('a.monaco-button', { hasText: 'Use It' }).count(), 1);
    await screenshot(page, 'download-exists');
  });
});
