// Typed-ahead reuse: when the user types the beginning of a recent suggestion, the rest of
// that suggestion is the answer; the model is not asked again. The document must be the
// same apart from the typed text (everything after the cursor unchanged).
//
// A few suggestions are kept per document, newest first: the one being shown, and the one
// computed ahead for the cursor after accepting it (CompletionService's accept-ahead), so
// that neither pushes the other out.

interface Remembered {
  prefix: string; // document text before the cursor when the suggestion was made
  suffix: string; // document text after the cursor
  suggestion: string;
}

/** Suggestions kept per document (each holds its document's text: keep few). */
const PER_DOCUMENT = 3;

export class TypedAheadCache {
  private readonly byUri = new Map<string, Remembered[]>();

  remember(uri: string, prefix: string, suffix: string, suggestion: string): void {
    const others = (this.byUri.get(uri) ?? []).filter(
      (r) => r.prefix !== prefix || r.suffix !== suffix,
    );
    const kept = suggestion ? [{ prefix, suffix, suggestion }, ...others] : others;
    if (kept.length) this.byUri.set(uri, kept.slice(0, PER_DOCUMENT));
    else this.byUri.delete(uri);
  }

  /**
   * Replaces the suggestion remembered for exactly this prefix and suffix (a suggestion that
   * grew in the background) with a longer one that extends it; a cursor nobody remembered
   * (or forgotten since) is left alone.
   */
  extend(uri: string, prefix: string, suffix: string, suggestion: string): void {
    const r = this.byUri.get(uri)?.find((e) => e.prefix === prefix && e.suffix === suffix);
    if (!r) return;
    if (suggestion.length > r.suggestion.length && suggestion.startsWith(r.suggestion)) {
      r.suggestion = suggestion;
    }
  }

  /** The rest of the newest remembered suggestion that applies, or undefined. */
  lookup(uri: string, prefix: string, suffix: string): string | undefined {
    for (const r of this.byUri.get(uri) ?? []) {
      if (suffix !== r.suffix || !prefix.startsWith(r.prefix)) continue;
      const typed = prefix.slice(r.prefix.length);
      if (typed.length >= r.suggestion.length || !r.suggestion.startsWith(typed)) continue;
      return r.suggestion.slice(typed.length);
    }
    return undefined;
  }

  forget(uri: string): void {
    this.byUri.delete(uri);
  }
}
