// Streams text while watching for stop strings (`<|im_end|>` written out as text, not as one
// special token). Text that could be the start of a stop string is held back until the next
// piece shows whether it is one, so a stop string never leaks into the reply half-written.

export class StopTextFilter {
  private held = '';

  constructor(private readonly stops: readonly string[]) {}

  /** Feeds a piece; returns what may be shown now and whether a stop string was seen. */
  push(piece: string): { emit: string; stopped: boolean } {
    const text = this.held + piece;
    for (const s of this.stops) {
      const i = text.indexOf(s);
      if (i >= 0) {
        this.held = '';
        return { emit: text.slice(0, i), stopped: true };
      }
    }
    const keep = this.longestStopPrefixAtEnd(text);
    this.held = text.slice(text.length - keep);
    return { emit: text.slice(0, text.length - keep), stopped: false };
  }

  /** What was held back, when the reply ends. */
  flush(): string {
    const out = this.held;
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
