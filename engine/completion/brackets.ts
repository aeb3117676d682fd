// Bracket bookkeeping for post-processing: which brackets the code before the cursor left
// open, and where a completion would close one it has no business closing. Strings are
// skipped crudely (quotes on one line; template literals may span lines), which is enough to
// keep `")"` in a string from counting.

const OPEN = '([{';
const CLOSE = ')]}';

interface ScanState {
  stack: string[];
  quote: string | null;
}

function step(state: ScanState, ch: string, prev: string): 'open' | 'close' | 'other' {
  if (state.quote) {
    if (ch === state.quote && prev !== '\\') state.quote = null;
    else if (ch === '\n' && state.quote !== '`') state.quote = null;
    return 'other';
  }
  if (ch === '"' || ch === "'" || ch === '`') {
    state.quote = ch;
    return 'other';
  }
  if (OPEN.includes(ch)) return 'open';
  if (CLOSE.includes(ch)) return 'close';
  return 'other';
}

/** Brackets left open by `text`, innermost last. */
export function openBrackets(text: string): string[] {
  const state: ScanState = { stack: [], quote: null };
  let prev = '';
  for (const ch of text) {
    const kind = step(state, ch, prev);
    if (kind === 'open') state.stack.push(ch);
    else if (kind === 'close') {
      const want = OPEN[CLOSE.indexOf(ch)];
      // A stray closer in the prefix (unbalanced code above): ignore rather than desync.
      if (state.stack[state.stack.length - 1] === want) state.stack.pop();
    }
    prev = ch;
  }
  return state.stack;
}

export interface BracketScan {
  /** Offset of the first closer that matches nothing open (-1: none). */
  badCloser: number;
  /** The completion's own bracket depth at the end of each of its lines. */
  depthAtLineEnd: number[];
}

/** Scans a completion given the brackets the prefix left open. */
export function scanCompletion(completion: string, openBefore: readonly string[]): BracketScan {
  const state: ScanState = { stack: [...openBefore], quote: null };
  const base = openBefore.length;
  const depthAtLineEnd: number[] = [];
  let prev = '';
  for (let i = 0; i < completion.length; i++) {
    const ch = completion[i];
    if (ch === '\n') depthAtLineEnd.push(state.stack.length - base);
    const kind = step(state, ch, prev);
    if (kind === 'open') state.stack.push(ch);
    else if (kind === 'close') {
      const want = OPEN[CLOSE.indexOf(ch)];
      if (state.stack[state.stack.length - 1] !== want) return { badCloser: i, depthAtLineEnd };
      state.stack.pop();
    }
    prev = ch;
  }
  depthAtLineEnd.push(state.stack.length - base);
  return { badCloser: -1, depthAtLineEnd };
}
