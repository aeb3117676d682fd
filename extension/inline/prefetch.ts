// Prefetch: tells the engine where the user is about to ask for ghost text, so it reads the
// file into the model's cache and has the suggestion ready (leapfrog/prefetch). Sent when a
// file is opened or focused and when the cursor has moved and rests (once it has stayed put
// for a moment), and right after a suggestion is accepted, at the new cursor (llama.vscode
// does the same after an accept). A cursor the engine has just answered for costs nothing:
// the engine's typed-ahead memory answers it.
import * as vscode from 'vscode';
import { PrefetchNotification } from '../../engine/protocol';
import type { CompletionGate } from '../gate';
import type { Sidecar } from '../sidecar';

/** Switching through tabs or moving through lines quickly should not start a prefetch each. */
const FOCUS_SETTLE_MS = 250;
const CURSOR_SETTLE_MS = 400;

export class Prefetcher implements vscode.Disposable {
  private timer: NodeJS.Timeout | undefined;
  private readonly subs: vscode.Disposable[];

  constructor(
    private readonly sidecar: Sidecar,
    private readonly gate: CompletionGate,
  ) {
    this.subs = [
      vscode.window.onDidChangeActiveTextEditor((e) => this.soon(e, FOCUS_SETTLE_MS)),
      vscode.window.onDidChangeTextEditorSelection((e) =>
        this.soon(e.textEditor, CURSOR_SETTLE_MS),
      ),
      // An engine (re)started: the editor in front is the one to prepare.
      sidecar.onDidStartClient(() => this.soon(vscode.window.activeTextEditor, FOCUS_SETTLE_MS)),
    ];
  }

  /** After an accept the cursor stands after the inserted text once the edit is applied. */
  afterAccept(uri: string): void {
    setTimeout(() => {
      const editor = vscode.window.activeTextEditor;
      if (editor && editor.document.uri.toString() === uri) this.send(editor);
    }, 0);
  }

  private soon(editor: vscode.TextEditor | undefined, settleMs: number): void {
    if (this.timer) clearTimeout(this.timer);
    if (!editor) return;
    this.timer = setTimeout(() => {
      if (vscode.window.activeTextEditor === editor) this.send(editor);
    }, settleMs);
  }

  private send(editor: vscode.TextEditor): void {
    const doc = editor.document;
    const scheme = doc.uri.scheme;
    if ((scheme !== 'file' && scheme !== 'untitled') || !this.gate.allows(doc.languageId)) return;
    if (editor.selections.length > 1) return; // no suggestion for several cursors
    const pos = editor.selection.active;
    void this.sidecar.client
      ?.sendNotification(PrefetchNotification, {
        uri: doc.uri.toString(),
        position: { line: pos.line, character: pos.character },
      })
      .catch(() => undefined);
  }

  dispose(): void {
    if (this.timer) clearTimeout(this.timer);
    for (const s of this.subs) s.dispose();
  }
}
