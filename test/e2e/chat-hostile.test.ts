// The chat webview against hostile model output, in real Chromium (code-server): the sidecar
// talks to a loopback OpenAI-compatible server (test/support/endpoint-servers.ts) that streams
// the text we choose — script tags, event handlers, javascript:/data: links, inline SVG,
// terminal escapes, a 1 MB answer — and we check that nothing runs, links are inert or https,
// and the view still answers a click. Then the sidecar is killed in the middle of a reply:
// the reply is marked interrupted, the history stays, and after the automatic restart the
// next message works.
import assert from 'node:assert/strict';
import type { ConsoleMessage, FrameLocator } from 'playwright-core';
import { FakeServer } from '../support/endpoint-servers';
import {
  launch,
  openChat,
  screenshot,
  sidecarPids,
  skipReason,
  sleep,
  waitReady,
  type Session,
} from './harness';

const reason = skipReason();

const HOSTILE = [
  'Here you go:',
  '',
  '<script>window.pwned = "script"</script>',
  '<img src=x onerror="window.pwned = \'img\'">',
  '<svg onload="window.pwned = \'svg\'"><script>window.pwned = "svg-script"</script></svg>',
  '<iframe src="javascript:parent.pwned=\'iframe\'"></iframe>',
  '[js link](javascript:window.pwned="js-link") [data link](data:text/html;base64,PHNjcmlwdD5wYXJlbnQucHduZWQ9MTwvc2NyaXB0Pg==)',
  '<a href="javascript:window.pwned=\'a\'" id="raw-a">raw a</a> [quote](https://ok.example/a"onmouseover="window.pwned=1)',
  '[safe link](https://example.com/docs)',
  '\x1b[31mred\x1b[0m \x1b]8;;https://evil.example/osc\x07osc link\x1b]8;;\x07',
  '',
  '```html',
  '<script>window.pwned = "code"</script>',
  '```',
  '',
  '```python',
  'def area(r):',
  '    return 3.14 * r ** 2  # a comment',
  '```',
].join('\n');

/** What the chat page holds and what tried to run there (evaluated inside the webview). */
interface PageFacts {
  /** Script elements added since the watch was installed, and those inside the replies. */
  scripts: number;
  replyScripts: number;
  dangerous: number;
  handlers: number;
  hrefs: string[];
  pwned: unknown;
  violations: number;
  escapes: boolean;
  text: string;
  /** A reply paragraph is wider than the view (a long URL that does not wrap). */
  overflow: boolean;
}

async function installWatch(chat: FrameLocator): Promise<void> {
  // Runs in the webview through the DevTools protocol (not subject to the page's CSP).
  await chat.locator('body').evaluate(`(() => {
    window.__violations = window.__violations || 0;
    if (!window.__watching) {
      window.__watching = true;
      window.__scripts = document.querySelectorAll('script').length;
      document.addEventListener('securitypolicyviolation', () => window.__violations++);
    }
  })()`);
}

async function facts(chat: FrameLocator): Promise<PageFacts> {
  return (await chat.locator('body').evaluate(`(() => ({
    scripts: document.querySelectorAll('script').length - window.__scripts,
    replyScripts: document.querySelectorAll('#messages script').length,
    dangerous: document.querySelectorAll('#messages :is(img, svg, iframe, object, embed, form, style, link, meta)').length,
    handlers: [...document.querySelectorAll('#messages *')].filter((e) =>
      [...e.attributes].some((a) => /^on/i.test(a.name) || /^(src|srcdoc|style)$/i.test(a.name))).length,
    hrefs: [...document.querySelectorAll('#messages a')].map((a) => a.getAttribute('href') || ''),
    pwned: window.pwned,
    violations: window.__violations || 0,
    escapes: /[\\u001b\\u0007]/.test(document.body.textContent || ''),
    text: document.querySelector('#messages')?.textContent || '',
    overflow: [...document.querySelectorAll('#messages .body > p')].some((p) => p.scrollWidth > p.clientWidth + 1),
  }))()`)) as PageFacts;
}

async function waitIdle(chat: FrameLocator, timeoutMs: number): Promise<void> {
  // The Send button comes back when the turn is over.
  await chat.locator('#send').waitFor({ state: 'visible', timeout: timeoutMs });
}

describe('e2e: chat webview against hostile output and a crash mid-stream', function () {
  this.timeout(240_000);
  let s: Session;
  let fake: FakeServer;
  const consoleProblems: string[] = [];

  before(async function () {
    if (reason) {
      console.log(`  SKIP e2e: ${reason}`);
      this.skip();
    }
    fake = await FakeServer.start('llama.cpp');
    s = await launch(
      'chat-hostile',
      { 'notes.md': '# notes\n' },
      { 'leapfrog.endpoint': fake.url },
    );
    s.page.on('console', (m: ConsoleMessage) => {
      if (m.type() === 'error' && /Content Security Policy|Refused to/i.test(m.text()))
        consoleProblems.push(m.text());
    });
    await waitReady(s.page);
  });

  after(async function () {
    await s?.stop();
    await fake?.close();
  });

  it('hostile markup, links and escapes in a reply: nothing runs, links inert or https', async function () {
    const chat = await openChat(s.page);
    await installWatch(chat);
    fake.chatReply = HOSTILE;
    fake.pieceChars = 7;
    await chat.locator('#input').fill('Show me some HTML.');
    await chat.locator('#input').press('Enter');
    await chat
      .locator('.turn.assistant .body', { hasText: 'safe link' })
      .waitFor({ timeout: 30_000 });
    await waitIdle(chat, 30_000);
    // Hover and click what a payload would hope a user touches.
    await chat.locator('.turn.assistant .body', { hasText: 'js link' }).last().click();
    await chat.locator('.turn.assistant .body', { hasText: 'raw a' }).last().hover();
    await sleep(500);
    const f = await facts(chat);
    await screenshot(s.page, 'chat-hostile');
    assert.equal(f.scripts, 0, 'no script element was added to the page');
    assert.equal(f.replyScripts, 0, 'none is in the transcript');
    assert.equal(f.dangerous, 0, 'no img/svg/iframe/object/form/style elements from the reply');
    assert.equal(f.handlers, 0, 'no event-handler, src or style attributes');
    assert.equal(f.pwned, undefined, 'no payload set its global');
    assert.equal(await s.page.evaluate('window.pwned'), undefined, 'nor in the workbench');
    assert.equal(f.violations, 0, 'nothing even tried to run (no CSP violation)');
    assert.deepEqual(consoleProblems, []);
    assert.deepEqual(f.hrefs, [
      'https://ok.example/a%22onmouseover=%22window.pwned=1',
      'https://example.com/docs',
    ]);
    assert.ok(!f.overflow, 'long unbroken text wraps inside the view');
    assert.ok(!f.escapes, 'no terminal escape characters reach the page');
    assert.ok(f.text.includes('red osc link'), 'the escaped text stays readable');
    assert.ok(!f.text.includes('evil.example'), 'an OSC 8 target is not shown as a link');
    assert.ok(f.text.includes('<script>window.pwned = "code"</script>'), 'code shows as text');
    // Code blocks are highlighted in the theme's colours: a keyword is not the plain colour.
    const colours = (await chat.locator('body').evaluate(`(() => {
      const kw = document.querySelector('#messages code.hljs .hljs-keyword');
      const code = kw && kw.closest('code');
      return kw ? [getComputedStyle(kw).color, getComputedStyle(code).color, kw.textContent] : [];
    })()`)) as string[];
    assert.equal(colours.length, 3, 'a highlighted keyword is shown');
    assert.notEqual(colours[0], colours[1], `keyword colour ${colours[0]} vs text ${colours[1]}`);
  });

  it('a 1 MB answer streams in, and the view answers a click within seconds after', async function () {
    const chat = await openChat(s.page);
    await installWatch(chat);
    const paragraph = 'All work and no play makes a model a dull model. '.repeat(4) + '\n\n';
    const copies = Math.ceil(1_000_000 / paragraph.length);
    fake.chatReply = paragraph.repeat(copies);
    fake.pieceChars = 4096;
    await chat.locator('#input').fill('Write a very long answer.');
    const sent = Date.now();
    await chat.locator('#input').press('Enter');
    await chat.locator('#stop').waitFor({ state: 'visible', timeout: 30_000 });
    await waitIdle(chat, 120_000);
    const streamMs = Date.now() - sent;
    const started = Date.now();
    await chat.locator('#input').click({ timeout: 10_000 });
    await chat.locator('#input').fill('still here');
    const value = await chat.locator('#input').inputValue();
    const clickMs = Date.now() - started;
    assert.equal(value, 'still here');
    assert.ok(clickMs < 5000, `the view answered a click in ${clickMs} ms`);
    const f = await facts(chat);
    const shown = f.text.split('dull model.').length - 1;
    assert.equal(shown, 4 * copies, `the whole answer is shown (${f.text.length} chars)`);
    console.log(`      1 MB answer: streamed in ${streamMs} ms; a click answered in ${clickMs} ms`);
    assert.equal(f.scripts, 0);
    assert.equal(f.violations, 0);
    await chat.locator('#input').fill('');
  });

  it('the sidecar killed mid-reply: marked interrupted, history kept, the next message works', async function () {
    const { page } = s;
    const chat = await openChat(page);
    await chat.locator('#new-chat').click();
    fake.chatReply = 'The first half of a reply that never ends';
    fake.pieceChars = 10;
    fake.behaviour = 'hold';
    await chat.locator('#input').fill('Tell me about frogs.');
    await chat.locator('#input').press('Enter');
    const reply = chat.locator('.turn.assistant .body').last();
    await chat
      .locator('.turn.assistant .body', { hasText: 'The first' })
      .waitFor({ timeout: 30_000 });
    const before = sidecarPids(s.codeServerPid);
    assert.ok(before.length >= 1, 'a sidecar is running');
    for (const pid of before) process.kill(pid, 'SIGKILL');
    await waitIdle(chat, 30_000);
    const note = (await chat.locator('.turn.assistant .note').last().textContent()) ?? '';
    assert.match(note, /interrupted/i, `the reply is marked interrupted (note: "${note}")`);
    assert.match((await reply.textContent()) ?? '', /The first/, 'what streamed stays');
    await screenshot(page, 'chat-interrupted');

    // The automatic restart, then the next message gets a whole reply.
    const deadline = Date.now() + 60_000;
    while (Date.now() < deadline && sidecarPids(s.codeServerPid).every((p) => before.includes(p)))
      await sleep(200);
    await waitReady(page);
    fake.behaviour = 'ok';
    fake.chatReply = 'Frogs are amphibians.';
    await chat.locator('#input').fill('And toads?');
    await chat.locator('#input').press('Enter');
    await chat
      .locator('.turn.assistant .body', { hasText: 'Frogs are amphibians.' })
      .waitFor({ timeout: 30_000 });
    await waitIdle(chat, 30_000);
    const users = await chat.locator('.turn.user').allTextContents();
    assert.equal(users.length, 2, `both questions are in the history: ${JSON.stringify(users)}`);
    assert.match(users[0], /Tell me about frogs/);
    // The new sidecar was told the earlier turns (the history it lost in the crash).
    const last = fake.requests.filter((r) => r.path === '/v1/chat/completions').pop();
    assert.match(JSON.stringify(last?.body ?? {}), /Tell me about frogs/);
  });
});
