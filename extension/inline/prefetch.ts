// Prefetch: tells the engine where the user is about to ask for ghost text, so it reads the
// file into the model's cache and has the suggestion ready (leapfrog/prefetch). When it is
// sent is PrefetchPolicy's (prefetch-policy.ts): on open and focus, when the cursor comes to
// rest, right after an accept (llama.vscode does the same after an accept). A cursor the
// engine has just answered for costs nothing: the engine's typed-ahead memory answers it.
import * as vscode from 'vscode';
import { PrefetchNotification } from '../../engine/protocol';
import type { CompletionGate } from '../gate';
import type { Sidecar } from '../sidecar';
import { PrefetchPolicy, type PrefetchEditor } from './prefetch-policy';

function described(editor: vscode.TextEditor | undefined): PrefetchEditor | undefined {
  if (!editor) return undefined;
  const doc = editor.document;
  return {
    uri: doc.uri.toString(),
    scheme: doc.uri.scheme,
    languageId: doc.languageId,
    cursors: editor.selections.map((s) => s.active),
  };
}

export class Prefetcher implements vscode.Disposable {
  private readonly policy: PrefetchPolicy;
  private readonly subs: vscode.Disposable[];

  constructor(sidecar: Sidecar, gate: CompletionGate) {
    this.policy = new PrefetchPolicy({
      active: () => described(vscode.window.activeTextEditor),
      allows: (languageId) => gate.allows(languageId),
      send: (uri, position) => {
        void sidecar.client
          ?.sendNotification(PrefetchNotification, { uri, position })
          .catch(() => undefined);
      },
      setTimer: (fn, ms) => setTimeout(fn, ms),
      clearTimer: (h) => clearTimeout(h as NodeJS.Timeout),
    });
    this.subs = [
      vscode.window.onDidChangeActiveTextEditor((e) => this.policy.focused(described(e))),
      vscode.window.onDidChangeTextEditorSelection((e) => {
        const editor = described(e.textEditor);
        if (editor) this.policy.cursorMoved(editor);
      }),
      // An engine (re)started: the editor in front is the one to prepare.
      sidecar.onDidStartClient(() =>
        this.policy.focused(described(vscode.window.activeTextEditor)),
      ),
    ];
  }

  afterAccept(uri: string): void {
    this.policy.accepted(uri);
  }

  dispose(): void {
    this.policy.dispose();
    for (const s of this.subs) s.dispose();
  }
}
