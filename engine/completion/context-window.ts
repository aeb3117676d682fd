// Prefix and suffix windows around the cursor, sized in tokens. The prefix window starts at
// a line that is a multiple of `anchorLines`, so it stays put while the user types down
// through the file: the prompt's start (and with it the reusable KV prefix) changes only
// every `anchorLines` lines instead of on every new line.

export interface WindowBudget {
  prefixTokens: number;
  suffixTokens: number;
  /** Granularity of the prefix window's first line. */
  anchorLines: number;
}

export interface ContextWindow {
  prefix: string;
  suffix: string;
  /** Text left and right of the cursor on its line. */
  linePrefix: string;
  lineSuffix: string;
  /** The lines after the cursor's line inside the suffix window. */
  linesBelow: string[];
  prefixStartLine: number;
  suffixEndLine: number; // exclusive
}

/**
 * `lines` are the document's lines without terminators; `countTokens` counts one line's
 * tokens (callers cache it: most lines do not change between requests).
 */
export function buildContextWindow(
  lines: readonly string[],
  line: number,
  character: number,
  budget: WindowBudget,
  countTokens: (text: string) => number,
): ContextWindow {
  const current = lines[line] ?? '';
  let linePrefix = current.slice(0, character);
  const lineSuffix = current.slice(character);

  // Prefix: the cursor line's left part always; whole lines above while they fit.
  let used = countTokens(linePrefix);
  if (used > budget.prefixTokens) {
    // One enormous line (minified code): keep its right end, about 3 characters a token.
    linePrefix = linePrefix.slice(-budget.prefixTokens * 3);
    used = budget.prefixTokens;
  }
  let start = line;
  while (start > 0) {
    const cost = countTokens(lines[start - 1]) + 1;
    if (used + cost > budget.prefixTokens) break;
    used += cost;
    start--;
  }
  if (start > 0 && budget.anchorLines > 1) {
    start = Math.min(line, Math.ceil(start / budget.anchorLines) * budget.anchorLines);
  }
  const above = lines.slice(start, line);
  const prefix = (above.length ? above.join('\n') + '\n' : '') + linePrefix;

  // Suffix: the rest of the cursor line, then whole lines below while they fit.
  let suffixUsed = countTokens(lineSuffix);
  let end = line + 1;
  while (end < lines.length) {
    const cost = countTokens(lines[end]) + 1;
    if (suffixUsed + cost > budget.suffixTokens) break;
    suffixUsed += cost;
    end++;
  }
  const linesBelow = lines.slice(line + 1, end);
  const suffix = lineSuffix + (linesBelow.length ? '\n' + linesBelow.join('\n') : '');
  return {
    prefix,
    suffix,
    linePrefix,
    lineSuffix,
    linesBelow,
    prefixStartLine: start,
    suffixEndLine: end,
  };
}

/** Splits a document into lines the way LSP counts them (\n, \r\n and \r end a line). */
export function splitLines(text: string): string[] {
  return text.split(/\r\n|\r|\n/);
}
