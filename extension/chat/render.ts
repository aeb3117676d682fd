// Model output is untrusted text. It is rendered here, in the extension host, with markdown-it
// and raw HTML off, links only to http(s), and no images (a remote image would be a request
// leaving the machine); the webview only ever receives this sanitized HTML. Terminal escape
// sequences and other control characters are dropped first: they would show as boxes, and an
// OSC 8 hyperlink would otherwise leave its hidden target behind as a visible, linkified URL.
import MarkdownIt from 'markdown-it';
import { highlightCode } from './highlight';

const md = new MarkdownIt({ html: false, linkify: true, typographer: false, breaks: false });
const escape = md.utils.escapeHtml;

md.validateLink = (url: string) => /^https?:\/\//i.test(url.trim());

md.renderer.rules.image = (tokens, idx) => {
  // Shown as its alt text only; never fetched.
  return escape(tokens[idx].content || '[image]');
};

md.renderer.rules.link_open = (tokens, idx, options, _env, self) => {
  tokens[idx].attrSet('title', tokens[idx].attrGet('href') ?? '');
  return self.renderToken(tokens, idx, options);
};

function codeBlock(code: string, lang: string): string {
  const highlighted = highlightCode(code, lang.toLowerCase());
  const html = highlighted ?? escape(code);
  const cls = highlighted ? ' class="hljs"' : '';
  const label = lang ? `<span class="lang">${escape(lang)}</span>` : '<span class="lang"></span>';
  return (
    `<div class="code-block">` +
    `<div class="code-actions">${label}` +
    `<button class="code-copy" data-action="copy" title="Copy">Copy</button>` +
    `<button class="code-insert" data-action="insert" title="Insert at cursor">Insert</button>` +
    `</div><pre><code${cls}>${html}</code></pre></div>\n`
  );
}

md.renderer.rules.fence = (tokens, idx) => {
  const t = tokens[idx];
  const lang = t.info.trim().split(/\s+/)[0] ?? '';
  return codeBlock(t.content, lang);
};

md.renderer.rules.code_block = (tokens, idx) => codeBlock(tokens[idx].content, '');

// CSI (`ESC [ … final`), OSC (`ESC ] … BEL|ST`, hyperlinks and titles), two-byte escapes,
// then any C0/C1 control character but tab, newline and carriage return.
const TERMINAL_ESCAPES =
  // eslint-disable-next-line no-control-regex
  /\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?|\x1b[@-_]|[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]/g;

export function stripTerminalEscapes(text: string): string {
  return text.replace(TERMINAL_ESCAPES, '');
}

export function renderMarkdown(text: string): string {
  return md.render(stripTerminalEscapes(text));
}
