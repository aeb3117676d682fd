// Prefix and suffix windows around the cursor, sized in tokens. The prompt's start decides
// how much of the model's KV cache the next request can reuse (everything up to the first
// changed token): a window whose first line moves makes the model read the whole prompt
// again (930 tokens: ~290 ms of the bundled model in the editor, against ~2 ms for one new
// line). So the window keeps the previous request's first line while it fits the budget
// (the cursor moved up or down inside it), moves with room to spare once the user has typed
// past its end (a quarter of the budget), and starts at a multiple of `anchorLines`.

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
  /** The first line of the previous window in this document, kept where it still fits. */
  previousStart?: number,
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
  const firstLineWithin = (tokens: number): number => {
    let first = line;
    let total = used;
    while (first > 0) {
      const cost = countTokens(lines[first - 1]) + 1;
      if (total + cost > tokens) break;
      total += cost;
      first--;
    }
    return first;
  };
  const anchored = (first: number): number =>
    first > 0 && budget.anchorLines > 1
      ? Math.min(line, Math.ceil(first / budget.anchorLines) * budget.anchorLines)
      : first;
  const earliest = firstLineWithin(budget.prefixTokens);
  let start: number;
  if (previousStart !== undefined && previousStart >= earliest && previousStart <= line) {
    start = previousStart;
  } else if (previousStart !== undefined && previousStart < earliest) {
    start = anchored(firstLineWithin(Math.floor((budget.prefixTokens * 3) / 4)));
  } else start = anchored(earliest);
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
