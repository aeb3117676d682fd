// When to prefetch (extension/inline/prefetch.ts wires it to VS Code's events): kept apart
// from the editor API so its rules can be tested with fake timers (test/unit/prefetch-policy).
//
// Rules: a prefetch goes out once the editor in front has settled — 250 ms after a file is
// opened or focused (switching through tabs starts none), 400 ms after the cursor came to
// rest (every move restarts the wait) — and right after an accept, at the new cursor of the
// same document. Only files and untitled documents whose language the gate allows, and only
// with one cursor (there is no suggestion for several).

/** What the policy needs of an editor: the document and its cursors. */
export interface PrefetchEditor {
  uri: string;
  scheme: string;
  languageId: string;
  cursors: readonly { line: number; character: number }[];
}

export interface PrefetchDeps {
  /** The editor in front now (it may have changed while a wait ran). */
  active(): PrefetchEditor | undefined;
  allows(languageId: string): boolean;
  send(uri: string, position: { line: number; character: number }): void;
  setTimer(fn: () => void, ms: number): unknown;
  clearTimer(handle: unknown): void;
}

export const FOCUS_SETTLE_MS = 250;
export const CURSOR_SETTLE_MS = 400;

export class PrefetchPolicy {
  private timer: unknown;

  constructor(private readonly deps: PrefetchDeps) {}

  /** A file opened or focused, or an engine (re)started with this editor in front. */
  focused(editor: PrefetchEditor | undefined): void {
    this.soon(editor, FOCUS_SETTLE_MS);
  }

  cursorMoved(editor: PrefetchEditor): void {
    this.soon(editor, CURSOR_SETTLE_MS);
  }

  /** After an accept the cursor stands after the inserted text once the edit is applied. */
  accepted(uri: string): void {
    this.deps.setTimer(() => {
      const editor = this.deps.active();
      if (editor && editor.uri === uri) this.send(editor);
    }, 0);
  }

  dispose(): void {
    if (this.timer !== undefined) this.deps.clearTimer(this.timer);
    this.timer = undefined;
  }

  private soon(editor: PrefetchEditor | undefined, settleMs: number): void {
    this.dispose();
    if (!editor) return;
    this.timer = this.deps.setTimer(() => {
      this.timer = undefined;
      const now = this.deps.active();
      if (now && now.uri === editor.uri) this.send(now);
    }, settleMs);
  }

  private send(editor: PrefetchEditor): void {
    if (editor.scheme !== 'file' && editor.scheme !== 'untitled') return;
    if (!this.deps.allows(editor.languageId) || editor.cursors.length !== 1) return;
    const c = editor.cursors[0]!;
    this.deps.send(editor.uri, { line: c.line, character: c.character });
  }
}
