// "Leapfrog: Choose Model…" in a real VS Code (code-server + Chromium), as a person uses it:
// the models discovered in `leapfrog.modelFolders` (here the bundled pair, and a folder with
// a model of an unsupported architecture) grouped under their source, the unsupported one
// shown with its reason and refused when picked, and the target picked "with draft", which
// writes both settings. Skips like the main e2e suite where code-server/Chromium are absent.
import { strict as assert } from 'node:assert';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { tinyGguf, writeFile } from '../unit/model-discovery-fixtures';
import {
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

const bundled = join(root, 'models');
const target = join(bundled, 'leapfrog-coder.gguf');
const draft = join(bundled, 'leapfrog-coder-draft.gguf');

describe('e2e: Choose Model… lists discovered models', function () {
  this.timeout(180_000);
  let s: Session;
  const other = mkdtempSync(join(tmpdir(), 'leapfrog-e2e-models-'));

  before(async function () {
    const reason = skipReason();
    if (reason) {
      console.log(`  SKIP e2e choose model: ${reason}`);
      this.skip();
    }
    writeFile(join(other, 'rwkv-mini.gguf'), tinyGguf({ arch: 'rwkv6' }).bytes);
    s = await launch(
      'choose-model',
      { 'hello.py': 'print("hello")\n' },
      { 'leapfrog.modelFolders': [bundled, other] },
    );
    await waitReady(s.page);
  });

  after(async () => {
    await s?.stop();
    rmSync(other, { recursive: true, force: true });
  });

  const settings = () => readUserSettings(s);

  const rows = () => s.page.locator('.quick-input-list .monaco-list-row');

  it('shows the folder models under their source; an unsupported one says why', async () => {
    const { page } = s;
    await runCommand(page, 'Leapfrog: Choose Model…');
    await rows().filter({ hasText: 'rwkv-mini' }).first().waitFor({ timeout: 30_000 });
    const rwkv = rows().filter({ hasText: 'rwkv-mini' }).first();
    assert.match((await rwkv.textContent()) ?? '', /Cannot be loaded: architecture 'rwkv6'/);
    const coder = rows().filter({ hasText: 'draft available' });
    assert.equal(await coder.count(), 1, 'the target, with its draft');
    assert.match((await coder.textContent()) ?? '', /leapfrog-coder.*qwen2 · 43M · Q8_0 · 46 MB/);
    assert.ok(
      (await page.locator('.quick-input-list', { hasText: 'Model folders' }).count()) > 0,
      'the source separator',
    );
    await screenshot(page, 'choose-model-list');
    // Picking the unsupported one refuses it and changes nothing.
    const input = page.locator('.quick-input-widget input');
    await input.fill('rwkv-mini');
    await rows().filter({ hasText: 'rwkv-mini' }).first().waitFor();
    await page.keyboard.press('Enter');
    await page
      .locator('.notifications-toasts', { hasText: 'Leapfrog cannot load rwkv-mini' })
      .waitFor({ timeout: 10_000 });
    assert.equal(settings()['leapfrog.model'], undefined);
  });

  it('a target picked with its draft writes both settings; the engine is ready after', async () => {
    const { page } = s;
    await runCommand(page, 'Leapfrog: Choose Model…');
    const input = page.locator('.quick-input-widget input');
    await rows().filter({ hasText: 'draft available' }).first().waitFor({ timeout: 30_000 });
    await input.fill('draft available');
    await rows().filter({ hasText: 'draft available' }).first().waitFor();
    await page.keyboard.press('Enter');
    const withDraft = rows().filter({ hasText: 'With draft leapfrog-coder-draft' });
    await withDraft.waitFor({ timeout: 10_000 });
    assert.equal(await rows().filter({ hasText: 'Without draft' }).count(), 1);
    await withDraft.click();
    const deadline = Date.now() + 20_000;
    const written = () =>
      settings()['leapfrog.model'] === target && settings()['leapfrog.draftModel'] === draft;
    while (Date.now() < deadline && !written()) await sleep(200);
    assert.equal(settings()['leapfrog.model'], target);
    assert.equal(settings()['leapfrog.draftModel'], draft);
    await waitReady(page);
  });
});
