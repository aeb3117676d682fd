// End to end, in a real VS Code (code-server 4.100.3 + Debian Chromium, driven by
// playwright-core): ghost text in Python and TypeScript, the chat sidebar, Explain selection,
// recovery from a killed sidecar, and a missing model. Skips, with the reason, where
// code-server/Chromium or the built engine are not installed (scripts/e2e-setup.mjs installs
// the former, `npm run build` makes the latter).
import assert from 'node:assert/strict';
import { copyFileSync, existsSync, mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  findNotification,
  artifacts,
  launch,
  openChat,
  openFile,
  root,
  runCommand,
  screenshot,
  setSetting,
  sidecarPids,
  skipReason,
  sleep,
  statusText,
  waitGhost,
  waitReady,
  type Session,
} from './harness';

const files: Record<string, string> = {
  'shapes.py':
    'import math\n\n\nclass Circle:\n    def __init__(self, radius):\n        self.radius = radius\n\n    def area(self):\n        return math.pi * self.radius ** 2\n\n\n',
  'util.ts':
    'export function clamp(value: number, lo: number, hi: number): number {\n  return Math.min(hi, Math.max(lo, value));\n}\n\n',
  'explain_me.py':
    'def fibonacci(n):\n    a, b = 0, 1\n    for _ in range(n):\n        a, b = b, a + b\n    return a\n',
};

/** Types `text` at the end of `file`, waits for ghost text, accepts it with Tab, saves. */
async function typeAndAccept(s: Session, file: string, text: string, shot: string): Promise<void> {
  const { page } = s;
  await openFile(page, file);
  await page.keyboard.type(text, { delay: 25 });
  let ghost = await waitGhost(page, 20_000);
  if (!ghost) {
    // Nothing yet (the model may have had nothing to say here): ask explicitly, as
    // Alt+\ does, then keep typing a little.
    await runCommand(page, 'Trigger Inline Suggestion');
    ghost = await waitGhost(page, 20_000);
  }
  assert.ok(ghost.trim(), `no ghost text in ${file}; status bar: ${await statusText(page)}`);
  await screenshot(page, shot);
  // The first line with text: VS Code may render an empty inline part before the block.
  const firstLine = ghost
    .split('\n')
    .map((l) => l.trim())
    .find((l) => l !== '')!;
  const typedLine = text.trimEnd().split('\n').pop()!.trim();
  await page.keyboard.press('Tab');
  await page.keyboard.press('Control+S');
  // On a loaded machine the browser can take a while to apply the edit and save it: wait,
  // and save once more halfway in case the first Ctrl+S arrived before the edit.
  const started = Date.now();
  let savedAgain = false;
  let saved = '';
  while (Date.now() - started < 20_000) {
    saved = readFileSync(join(s.workspace, file), 'utf8');
    if (saved.includes(firstLine) && saved.includes(typedLine)) break;
    if (!savedAgain && Date.now() - started > 8_000) {
      savedAgain = true;
      await page.keyboard.press('Control+S');
    }
    await sleep(200);
  }
  assert.ok(saved.includes(typedLine), `typed text saved; file:\n${saved}`);
  assert.ok(
    saved.includes(firstLine),
    `Tab inserted the ghost text "${firstLine}"; file:\n${saved}`,
  );
}

const reason = skipReason();

describe('e2e: Leapfrog in a real VS Code (code-server + Chromium)', function () {
  this.timeout(180_000);
  let s: Session;

  before(async function () {
    if (reason) {
      console.log(`  SKIP e2e: ${reason}`);
      this.skip();
    }
    mkdirSync(artifacts, { recursive: true });
    s = await launch('suite', files);
    await waitReady(s.page);
  });

  after(async function () {
    await s?.stop();
  });

  it('shows ghost text from the engine in a Python file, and Tab inserts it', async function () {
    await typeAndAccept(s, 'shapes.py', 'def circumference(r):\n', 'ghost-text-python');
  });

  it('shows ghost text in a TypeScript file, and Tab inserts it', async function () {
    await typeAndAccept(
      s,
      'util.ts',
      'export function lerp(a: number, b: number, t: number): number {\n',
      'ghost-text-typescript',
    );
  });

  it('streams a chat reply, stops it, and keeps the conversation across a reload', async function () {
    const { page } = s;
    const chat = await openChat(page);
    await chat.locator('#new-chat').click();
    await chat
      .locator('#input')
      .fill('Write a long story about a frog who learns to write Python code.');
    await chat.locator('#input').press('Enter');
    const reply = chat.locator('.turn.assistant .body').last();
    // Streaming: the reply grows while the Stop button is up.
    await chat.locator('#stop').waitFor({ state: 'visible', timeout: 30_000 });
    let first = '';
    const deadline = Date.now() + 30_000;
    while (
      Date.now() < deadline &&
      !(first = ((await reply.textContent()) ?? '').replace('…', '').trim())
    )
      await sleep(50);
    assert.ok(first, 'some reply text streamed in');
    const streamingSeen = await chat.locator('.turn.streaming').count();
    await screenshot(page, 'chat-streaming');
    await chat
      .locator('#stop')
      .click()
      .catch(() => undefined);
    await chat.locator('#send').waitFor({ state: 'visible', timeout: 10_000 });
    const afterStop = (await reply.textContent()) ?? '';
    await sleep(1500);
    assert.equal((await reply.textContent()) ?? '', afterStop, 'nothing streams in after Stop');
    assert.ok(streamingSeen > 0 || afterStop.length > first.length, 'the reply streamed');
    const note =
      (await chat
        .locator('.turn.assistant .note')
        .last()
        .textContent()
        .catch(() => '')) ?? '';
    assert.match(note, /stopped|cut at the token limit|^$/);
    await screenshot(page, 'chat');

    await runCommand(page, 'Developer: Reload Window');
    await page.locator('.monaco-workbench').waitFor({ timeout: 60_000 });
    await sleep(2000);
    const again = await openChat(page);
    await again.locator('.turn.user', { hasText: 'frog who learns' }).waitFor({ timeout: 30_000 });
    const kept = (await again.locator('.turn.assistant .body').last().textContent()) ?? '';
    assert.ok(kept.trim().length > 0, 'the reply is still there after the reload');
    await waitReady(page);
  });

  it('explains a selected function in the sidebar, streamed', async function () {
    const { page } = s;
    await openFile(page, 'explain_me.py');
    await page.keyboard.press('Control+A');
    await runCommand(page, 'Leapfrog: Explain Selection');
    const chat = await openChat(page);
    await chat
      .locator('.turn.user', { hasText: 'explain_me.py' })
      .last()
      .waitFor({ timeout: 30_000 });
    const reply = chat.locator('.turn.assistant .body').last();
    const deadline = Date.now() + 60_000;
    let text = '';
    while (Date.now() < deadline) {
      text = ((await reply.textContent()) ?? '').replace('…', '').trim();
      if (text && (await chat.locator('#send').isVisible())) break;
      await sleep(100);
    }
    assert.ok(text, 'an explanation streamed into the sidebar');
    await screenshot(page, 'explain');
  });

  it('restarts a killed sidecar, and completions work again', async function () {
    const { page } = s;
    const before = sidecarPids(s.codeServerPid);
    assert.ok(before.length >= 1, 'a sidecar is running');
    for (const pid of before) process.kill(pid, 'SIGKILL');
    const deadline = Date.now() + 60_000;
    let after: number[] = [];
    while (Date.now() < deadline) {
      after = sidecarPids(s.codeServerPid).filter((p) => !before.includes(p));
      if (after.length > 0) break;
      await sleep(200);
    }
    assert.ok(after.length > 0, 'a new sidecar was started');
    await waitReady(page);
    assert.equal(
      await page.locator('.notifications-toasts .notification-list-item').count(),
      0,
      'no pop-ups',
    );
    await typeAndAccept(s, 'shapes.py', 'def diameter(r):\n', 'ghost-text-after-restart');
  });

  it('crashes in a row: the status says why and offers a restart, which brings it back', async function () {
    const { page } = s;
    // Kill every sidecar as soon as it appears, until the extension stops restarting it.
    const killed = new Set<number>();
    let quietSince = Date.now();
    const deadline = Date.now() + 120_000;
    while (Date.now() < deadline && Date.now() - quietSince < 4000) {
      for (const pid of sidecarPids(s.codeServerPid)) {
        if (killed.has(pid)) continue;
        killed.add(pid);
        quietSince = Date.now();
        try {
          process.kill(pid, 'SIGKILL');
        } catch {
          // it ended by itself
        }
      }
      await sleep(100);
    }
    assert.equal(sidecarPids(s.codeServerPid).length, 0, 'no sidecar is restarted by itself');
    assert.match(await statusText(page), /engine stopped/);
    // The notification (a toast, or in the notification centre when toasts are held back).
    const said = /stopped \d+ times in 3 minutes \(last: exited with signal SIGKILL/;
    const item = await findNotification(page, 'not restarting it by itself', 10_000, 0);
    assert.match((await item.textContent()) ?? '', said);
    await item.locator('.monaco-button', { hasText: 'Restart Engine' }).click();
    await waitReady(page);
    // Leave the workbench as it was: new notifications show as toasts again.
    await runCommand(page, 'Notifications: Clear All Notifications');
    assert.equal(sidecarPids(s.codeServerPid).length, 1, 'one sidecar after the restart');
  });

  it('a model path that does not exist: one clear error, and the status bar says so', async function () {
    const { page } = s;
    await setSetting(
      page,
      'leapfrog.model',
      'Path to a GGUF model',
      '/nonexistent/missing-model.gguf',
    );
    const deadline = Date.now() + 30_000;
    while (Date.now() < deadline && !/model not found/.test(await statusText(page)))
      await sleep(200);
    assert.match(await statusText(page), /model not found/);
    // Typing must not bring more errors.
    await openFile(page, 'shapes.py');
    await page.keyboard.type('x = 1\n', { delay: 30 });
    await sleep(3000);
    const toasts = page.locator('.notifications-toasts .notification-list-item-message');
    const messages = await toasts.allTextContents();
    const ours = messages.filter((m) => /Leapfrog/.test(m));
    assert.equal(
      ours.length,
      1,
      `exactly one error notification, got: ${JSON.stringify(messages)}`,
    );
    assert.match(ours[0], /model file not found: \/nonexistent\/missing-model\.gguf/);
    await screenshot(page, 'missing-model');
  });

  after(function () {
    // With LEAPFROG_UPDATE_SCREENSHOTS=1 the best screenshots also go to media/screenshots/
    // for the README (not on every run: they are tracked files).
    if (reason || !process.env.LEAPFROG_UPDATE_SCREENSHOTS) return;
    const out = join(root, 'media', 'screenshots');
    mkdirSync(out, { recursive: true });
    for (const n of ['ghost-text-python', 'chat', 'explain'])
      if (existsSync(join(artifacts, `${n}.png`)))
        copyFileSync(join(artifacts, `${n}.png`), join(out, `${n}.png`));
  });
});
