// Cuts streamed text at the earliest of several stop strings (chat replies, remote chat,
// the HTTP serve mode). Text that could be the start of a stop string is held back until
// later pieces show whether it is one, so no part of a stop string is ever emitted.
// (Earliest, not first in the list: with stops ["b", "a"] and the text "xa b", the text
// ends before "a".)

export class StopStrings {
  private held = '';
  private matched = '';

  constructor(private readonly stops: readonly string[]) {}

  /** The stop string that ended the text ('' while none has). */
  get stoppedAt(): string {
    return this.matched;
  }

  /** Feeds a piece; returns what may be shown now, and whether a stop string was seen. */
  push(piece: string): { emit: string; stopped: boolean } {
    if (this.matched) return { emit: '', stopped: true };
    const text = this.held + piece;
    let at = -1;
    for (const s of this.stops) {
      const i = text.indexOf(s);
      if (i >= 0 && (at < 0 || i < at || (i === at && s.length > this.matched.length))) {
        at = i;
        this.matched = s;
      }
    }
    if (at >= 0) {
      this.held = '';
      return { emit: text.slice(0, at), stopped: true };
    }
    const keep = this.longestStopPrefixAtEnd(text);
    this.held = text.slice(text.length - keep);
    return { emit: text.slice(0, text.length - keep), stopped: false };
  }

  /** What was held back, when the text ends without a stop string. */
  flush(): string {
    const out = this.matched ? '' : this.held;
    this.held = '';
    return out;
  }

  private longestStopPrefixAtEnd(text: string): number {
    let best = 0;
    for (const s of this.stops) {
      for (let k = Math.min(s.length - 1, text.length); k > best; k--) {
        if (text.endsWith(s.slice(0, k))) {
          best = k;
          break;
        }
      }
    }
    return best;
  }
}
