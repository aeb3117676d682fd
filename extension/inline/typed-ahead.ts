// Remembers recent suggestions so that typing *into* a suggestion (or accepting part of it)
// is answered at once from memory instead of a new engine round trip.
import type * as vscode from 'vscode';

interface Entry {
  uri: string;
  /** Document offset where the suggestion was to be inserted. */
  offset: number;
  /** The text just before `offset` when it was made: if it changed, the entry is stale. */
  before: string;
  text: string;
}

const CONTEXT_CHARS = 256;
const MAX_ENTRIES = 16;

export class TypedAheadCache {
  private entries: Entry[] = [];

  remember(doc: vscode.TextDocument, pos: vscode.Position, text: string): void {
    if (!text) return;
    const offset = doc.offsetAt(pos);
    const before = doc.getText().slice(Math.max(0, offset - CONTEXT_CHARS), offset);
    this.entries = [{ uri: doc.uri.toString(), offset, before, text }, ...this.entries].slice(
      0,
      MAX_ENTRIES,
    );
  }

  /** The rest of a remembered suggestion that the text typed since is a prefix of. */
  lookup(doc: vscode.TextDocument, pos: vscode.Position): string | undefined {
    const uri = doc.uri.toString();
    const offset = doc.offsetAt(pos);
    const all = doc.getText();
    for (const e of this.entries) {
      if (e.uri !== uri || offset < e.offset) continue;
      const typed = all.slice(e.offset, offset);
      if (typed.length >= e.text.length || !e.text.startsWith(typed)) continue;
      if (all.slice(Math.max(0, e.offset - CONTEXT_CHARS), e.offset) !== e.before) continue;
      return e.text.slice(typed.length);
    }
    return undefined;
  }

  clear(): void {
    this.entries = [];
  }
}
