// The chat's markdown renderer against hostile model output: no raw HTML, no script-capable
// URL, no image fetch, no terminal escapes; code stays code. (The same payloads run in real
// Chromium in test/e2e/chat-hostile.test.ts.)
import { strict as assert } from 'node:assert';
import { renderMarkdown, stripTerminalEscapes } from '../../extension/chat/render';

/** The text a reader sees (and Copy takes): tags dropped, entities decoded. */
function visibleText(html: string): string {
  return html
    .replace(/<[^>]*>/g, '')
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/&amp;/g, '&');
}

/** Every tag name and every attribute the HTML carries. */
function tagsAndAttributes(html: string): { tags: Set<string>; attrs: string[] } {
  const tags = new Set<string>();
  const attrs: string[] = [];
  for (const m of html.matchAll(/<([a-z][a-z0-9]*)([^>]*)>/gi)) {
    tags.add(m[1].toLowerCase());
    for (const a of m[2].matchAll(/([a-z-]+)="([^"]*)"/gi)) attrs.push(`${a[1]}=${a[2]}`);
  }
  return { tags, attrs };
}

const ALLOWED_TAGS = new Set(['p', 'a', 'div', 'span', 'button', 'pre', 'code', 'em', 'strong']);

describe('chat render: hostile model output', () => {
  const payloads = [
    '<script>window.pwned=1</script>',
    '<img src=x onerror="window.pwned=1">',
    '<svg onload="window.pwned=1"><script>window.pwned=1</script></svg>',
    '<a href="javascript:window.pwned=1">x</a>',
    '[a](javascript:window.pwned=1) [b](  JaVaScRiPt:alert(1)) [c](vbscript:x)',
    '[d](data:text/html;base64,PHNjcmlwdD53aW5kb3cucHduZWQ9MTwvc2NyaXB0Pg==) <data:text/html,x>',
    '[e](https://ok.example/a"onmouseover="window.pwned=1)',
    '![pic](https://tracker.example/p.png) <iframe src="https://evil.example"></iframe>',
    '<style>body{display:none}</style><form action="https://evil.example"><input></form>',
  ];

  for (const p of payloads) {
    it(`renders inert: ${p.slice(0, 50)}`, () => {
      const html = renderMarkdown(p);
      const { tags, attrs } = tagsAndAttributes(html);
      for (const t of tags) assert.ok(ALLOWED_TAGS.has(t), `tag <${t}> in ${html}`);
      for (const a of attrs) {
        assert.match(a, /^(class|title|href|data-action)=/, `attribute ${a} in ${html}`);
        if (a.startsWith('href=')) assert.match(a, /^href=https:\/\//);
        assert.doesNotMatch(a, /"|javascript:|data:/i);
      }
    });
  }

  it('drops terminal escapes, OSC 8 hyperlinks included, and keeps the text', () => {
    const text =
      '\x1b[31mred\x1b[0m \x1b]8;;https://evil.example\x07click\x1b]8;;\x07 \x1b]0;title\x1b\\ok\x07\x08';
    assert.equal(stripTerminalEscapes(text), 'red click ok');
    const html = renderMarkdown(text);
    assert.ok(!/evil\.example/.test(html) && !html.includes('\x1b') && !html.includes('\x07'));
    assert.match(html, /red click ok/);
  });

  it('keeps code as escaped text, and tabs and newlines in it', () => {
    const html = renderMarkdown('```\n<script>\twindow.pwned=1\n</script>\n```');
    assert.match(html, /<code>&lt;script&gt;\twindow\.pwned=1\n&lt;\/script&gt;/);
  });

  // Whole, not cut short (its speed is for benchmarks, not a timed test).
  it('renders a 1 MB reply whole', () => {
    const big = ('word '.repeat(15) + '\n\n').repeat(13_000);
    const html = renderMarkdown(big);
    assert.equal(html.match(/<p>/g)?.length, 13_000);
  });

  describe('code highlighting', () => {
    const code = 'def area(r):\n    return 3.14 * r ** 2  # "<b>"\n';

    it('colours a known language with highlight.js classes, the code unchanged', () => {
      const html = renderMarkdown('```python\n' + code + '```');
      assert.match(html, /<code class="hljs"><span class="hljs-keyword">def<\/span>/);
      assert.match(html, /<span class="hljs-comment"># &quot;&lt;b&gt;&quot;<\/span>/);
      const inner = html.slice(html.indexOf('<code'), html.indexOf('</code>'));
      assert.equal(visibleText(inner), code);
    });

    it('hostile markup inside highlighted code stays text in spans', () => {
      const evil = '<script>window.pwned=1</script>\n<img src=x onerror="window.pwned=2">\n';
      for (const lang of ['html', 'xml', 'javascript', 'markdown']) {
        const html = renderMarkdown('```' + lang + '\n' + evil + '```');
        const { tags, attrs } = tagsAndAttributes(html);
        for (const t of tags) assert.ok(ALLOWED_TAGS.has(t), `tag <${t}> in ${lang}: ${html}`);
        for (const a of attrs) assert.match(a, /^(class|title|data-action)=[\w -]*$/, a);
        const inner = html.slice(html.indexOf('<code'), html.indexOf('</code>'));
        assert.equal(visibleText(inner), evil);
      }
    });

    it('an unknown language and a huge block stay plain (escaped)', () => {
      assert.match(renderMarkdown('```nosuchlang\n<x>\n```'), /<code>&lt;x&gt;\n<\/code>/);
      const huge = 'x = 1\n'.repeat(20_000);
      const html = renderMarkdown('```python\n' + huge + '```');
      assert.ok(!html.includes('hljs'), 'not highlighted');
    });
  });
});
