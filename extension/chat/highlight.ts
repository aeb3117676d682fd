// Syntax highlighting for chat code blocks, in the extension host with highlight.js (its core
// and the languages people ask about, so the bundle stays small). Its output is the code,
// HTML-escaped, inside `<span class="hljs-…">` elements only; media/chat.css colours those
// classes from the theme's variables. Unknown languages and huge blocks stay plain.
//
// Loaded with require, not import: highlight.js's type declarations pull the DOM library into
// the whole program (`/// <reference lib="dom" />`), which retypes Node's streams. The few
// calls used here are typed below instead.
interface HljsLanguage {
  name?: string;
}
interface Hljs {
  registerLanguage(name: string, language: (hljs: Hljs) => HljsLanguage): void;
  registerAliases(aliases: string[], o: { languageName: string }): void;
  getLanguage(name: string): HljsLanguage | undefined;
  highlight(code: string, o: { language: string; ignoreIllegals: boolean }): { value: string };
}
/** A language file's module.exports: the language's definition function. */
type LanguageModule = (hljs: Hljs) => HljsLanguage;

/* eslint-disable @typescript-eslint/no-require-imports -- see above */
const hljs = require('highlight.js/lib/core') as Hljs;
const LANGUAGES: Record<string, LanguageModule> = {
  bash: require('highlight.js/lib/languages/bash') as LanguageModule,
  c: require('highlight.js/lib/languages/c') as LanguageModule,
  cpp: require('highlight.js/lib/languages/cpp') as LanguageModule,
  csharp: require('highlight.js/lib/languages/csharp') as LanguageModule,
  css: require('highlight.js/lib/languages/css') as LanguageModule,
  diff: require('highlight.js/lib/languages/diff') as LanguageModule,
  go: require('highlight.js/lib/languages/go') as LanguageModule,
  java: require('highlight.js/lib/languages/java') as LanguageModule,
  javascript: require('highlight.js/lib/languages/javascript') as LanguageModule,
  json: require('highlight.js/lib/languages/json') as LanguageModule,
  kotlin: require('highlight.js/lib/languages/kotlin') as LanguageModule,
  markdown: require('highlight.js/lib/languages/markdown') as LanguageModule,
  php: require('highlight.js/lib/languages/php') as LanguageModule,
  python: require('highlight.js/lib/languages/python') as LanguageModule,
  ruby: require('highlight.js/lib/languages/ruby') as LanguageModule,
  rust: require('highlight.js/lib/languages/rust') as LanguageModule,
  shell: require('highlight.js/lib/languages/shell') as LanguageModule,
  sql: require('highlight.js/lib/languages/sql') as LanguageModule,
  swift: require('highlight.js/lib/languages/swift') as LanguageModule,
  typescript: require('highlight.js/lib/languages/typescript') as LanguageModule,
  xml: require('highlight.js/lib/languages/xml') as LanguageModule,
  yaml: require('highlight.js/lib/languages/yaml') as LanguageModule,
};
/* eslint-enable @typescript-eslint/no-require-imports */
for (const [name, lang] of Object.entries(LANGUAGES)) hljs.registerLanguage(name, lang);
// VS Code's language ids that highlight.js spells differently.
hljs.registerAliases(['typescriptreact', 'tsx'], { languageName: 'typescript' });
hljs.registerAliases(['javascriptreact', 'jsx'], { languageName: 'javascript' });
hljs.registerAliases(['shellscript'], { languageName: 'bash' });
hljs.registerAliases(['jsonc'], { languageName: 'json' });

/** Larger blocks are shown plain: highlighting them would stall the extension host. */
const MAX_HIGHLIGHT_CHARS = 100_000;

/** The code as highlighted HTML, or undefined when the language is unknown or it is too big. */
export function highlightCode(code: string, lang: string): string | undefined {
  if (!lang || code.length > MAX_HIGHLIGHT_CHARS || !hljs.getLanguage(lang)) return undefined;
  try {
    return hljs.highlight(code, { language: lang, ignoreIllegals: true }).value;
  } catch {
    return undefined;
  }
}
