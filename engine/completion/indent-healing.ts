// When the cursor sits in a line's leading whitespace, the prompt ends at the line break
// before it instead: tokenizers join indentation with the code after it, so a prompt that
// ends in bare spaces asks the model for something it rarely saw (the bundled model answers
// it with control tokens). The model's output must then begin with the typed whitespace,
// which is removed again; output that indents differently is dropped.

/** The typed indentation to move from the prompt into the expected output ('' for none). */
export function indentToHeal(linePrefix: string): string {
  return /^[ \t]+$/.test(linePrefix) ? linePrefix : '';
}

export class IndentHealer {
  private full = '';
  mismatch = false;

  constructor(private readonly indent: string) {}

  /** Adds model output; returns the text after the typed indentation so far, or undefined
   * while the output is still inside (or has left) the expected indentation. */
  push(piece: string): string | undefined {
    this.full += piece;
    if (!this.indent) return this.full;
    if (this.full.length < this.indent.length) {
      if (!this.indent.startsWith(this.full)) this.mismatch = true;
      return undefined;
    }
    if (!this.full.startsWith(this.indent)) {
      this.mismatch = true;
      return undefined;
    }
    return this.full.slice(this.indent.length);
  }
}
