// Turns raw model output into the ghost text that is shown — or into nothing. The rules, in
// order (each one only ever shortens the text):
//   1. cut at a leaked special token (`<|endoftext|>`, `<|file_sep|>`, …);
//   2. single line when text stands right of the cursor;
//   3. multi-line output ends where indentation leaves the block (a closing line at the
//      block's own level is kept);
//   4. drop the part that repeats the lines below the cursor, and a model loop: the output
//      ends before a line that repeats one of its own earlier lines;
//   5. drop a tail that repeats what already stands right of the cursor (`)`, `");`);
//   6. cut at a closing bracket that matches nothing open; drop trailing lines that leave
//      brackets the completion opened unclosed;
//   7. trim trailing whitespace; nothing that is only whitespace, or that equals the text
//      already there, is shown.
import { openBrackets, scanCompletion } from './brackets';

export interface CompletionContext {
  /** The prefix window (for the brackets open at the cursor). */
  prefix: string;
  linePrefix: string;
  lineSuffix: string;
  linesBelow: readonly string[];
  specialTexts: readonly string[];
}

export function isSingleLine(ctx: CompletionContext): boolean {
  return ctx.lineSuffix.trim() !== '';
}

export function postprocess(raw: string, ctx: CompletionContext): string {
  let text = cutAtSpecial(raw, ctx.specialTexts);
  if (isSingleLine(ctx)) text = text.split('\n')[0];
  else text = cutAtBlockEnd(text, ctx.linePrefix);
  text = cutRepeatOfBelow(text, ctx.linesBelow, ctx.linePrefix);
  text = cutSelfRepeat(text);
  text = trimSuffixOverlap(text, ctx.lineSuffix);
  text = balanceBrackets(text, ctx.prefix);
  text = text.replace(/[ \t]+$/gm, '').replace(/\n+$/, '');
  if (!text.trim()) return '';
  if (isSingleLine(ctx) && ctx.lineSuffix.trimStart().startsWith(text.trim())) return '';
  return text;
}

export function cutAtSpecial(text: string, specials: readonly string[]): string {
  let end = text.length;
  for (const s of specials) {
    const i = text.indexOf(s);
    if (i >= 0 && i < end) end = i;
  }
  return text.slice(0, end);
}

export function indentWidth(line: string): number {
  let w = 0;
  for (const ch of line) {
    if (ch === ' ') w++;
    else if (ch === '\t') w += 4;
    else break;
  }
  return w;
}

const BLOCK_OPENER = /([:{([]|=>|\bdo|\bthen)\s*$/;
const BLOCK_CLOSER = /^\s*([)}\]]|end\b|else\b|elif\b|except\b|catch\b|finally\b)/;

/**
 * Index (in lines of `text`) of the first line that leaves the block the cursor is in, or
 * -1. The cursor's line is `linePrefix` + the completion's first line.
 */
export function blockEndLine(text: string, linePrefix: string): number {
  const lines = text.split('\n');
  const cursorLine = linePrefix + lines[0];
  const base = indentWidth(cursorLine);
  const opensBlock = BLOCK_OPENER.test(cursorLine.trimEnd());
  for (let i = 1; i < lines.length; i++) {
    const line = lines[i];
    if (!line.trim()) continue;
    const w = indentWidth(line);
    if (w < base) return i;
    if (opensBlock && w === base) {
      // The block the first line opened is over: keep its closing line, stop after it.
      return BLOCK_CLOSER.test(line) ? i + 1 : i;
    }
  }
  return -1;
}

export function cutAtBlockEnd(text: string, linePrefix: string): string {
  const end = blockEndLine(text, linePrefix);
  return end < 0 ? text : text.split('\n').slice(0, end).join('\n');
}

/** Cuts the completion where it starts repeating the first non-empty line below. */
export function cutRepeatOfBelow(
  text: string,
  linesBelow: readonly string[],
  linePrefix: string,
): string {
  const next = linesBelow.find((l) => l.trim() !== '')?.trim();
  if (!next) return text;
  const lines = text.split('\n');
  for (let i = 0; i < lines.length; i++) {
    // The first line continues the cursor's line: compare the whole line it makes.
    const whole = i === 0 ? linePrefix + lines[0] : lines[i];
    if (whole.trim() === next) return lines.slice(0, i).join('\n');
  }
  return text;
}

/**
 * Drops a tail that the text right of the cursor already holds (`foo)` before `)` → `foo`).
 * Only punctuation is trimmed: a word at the end is the model's, not an overlap.
 */
/**
 * Cuts a multi-line suggestion before the first line that repeats one of its own earlier
 * lines (ignoring blank lines and lone brackets): small models fall into loops, and a
 * repeated statement is almost never what the user wants twice.
 */
export function cutSelfRepeat(text: string): string {
  const lines = text.split('\n');
  const seen = new Set<string>();
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i];
    if (/^[\s)\]}([{;,]*$/.test(line)) continue;
    if (seen.has(line)) return lines.slice(0, i).join('\n');
    seen.add(line);
  }
  return text;
}

export function trimSuffixOverlap(text: string, lineSuffix: string): string {
  const suffix = lineSuffix.trimStart();
  if (!suffix || text.includes('\n')) return text;
  for (let k = Math.min(suffix.length, text.length); k > 0; k--) {
    const head = suffix.slice(0, k);
    if (/^[^\w\s]+$/.test(head) && text.endsWith(head)) return text.slice(0, -k);
  }
  return text;
}

/**
 * Cuts at a closer that matches nothing open; when a multi-line completion ends with
 * brackets it opened still open, keeps it up to the last line where they were all closed
 * (or its first line).
 */
export function balanceBrackets(text: string, prefix: string): string {
  const scan = scanCompletion(text, openBrackets(prefix));
  if (scan.badCloser >= 0) text = text.slice(0, scan.badCloser);
  const depths = scanCompletion(text, openBrackets(prefix)).depthAtLineEnd;
  if (depths.length > 1 && depths[depths.length - 1] > 0) {
    let keep = 1;
    for (let i = depths.length - 2; i >= 1; i--) {
      if (depths[i] <= 0) {
        keep = i + 1;
        break;
      }
    }
    text = text.split('\n').slice(0, keep).join('\n');
  }
  return text;
}
