// Typed-ahead reuse: when the user types the beginning of the last suggestion, the rest of
// that suggestion is the answer; the model is not asked again. The document must be the
// same apart from the typed text (everything after the cursor unchanged).

interface Remembered {
  prefix: string; // document text before the cursor when the suggestion was made
  suffix: string; // document text after the cursor
  suggestion: string;
}

export class TypedAheadCache {
  private readonly byUri = new Map<string, Remembered>();

  remember(uri: string, prefix: string, suffix: string, suggestion: string): void {
    if (suggestion) this.byUri.set(uri, { prefix, suffix, suggestion });
    else this.byUri.delete(uri);
  }

  /**
   * Replaces the suggestion remembered for exactly this prefix and suffix (a suggestion that
   * grew in the background), unless a newer request has remembered something else since.
   */
  extend(uri: string, prefix: string, suffix: string, suggestion: string): void {
    const r = this.byUri.get(uri);
    if (!r || r.prefix !== prefix || r.suffix !== suffix) return;
    if (suggestion.length > r.suggestion.length && suggestion.startsWith(r.suggestion)) {
      r.suggestion = suggestion;
    }
  }

  /** The rest of the remembered suggestion, or undefined when it does not apply. */
  lookup(uri: string, prefix: string, suffix: string): string | undefined {
    const r = this.byUri.get(uri);
    if (!r || suffix !== r.suffix || !prefix.startsWith(r.prefix)) return undefined;
    const typed = prefix.slice(r.prefix.length);
    if (typed.length >= r.suggestion.length) return undefined;
    if (!r.suggestion.startsWith(typed)) return undefined;
    return r.suggestion.slice(typed.length);
  }

  forget(uri: string): void {
    this.byUri.delete(uri);
  }
}
