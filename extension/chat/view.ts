// The chat sidebar: a webview view whose page (media/chat.js, media/chat.css) only displays
// what we send and reports clicks. Everything it shows is rendered and sanitized here.
import { randomBytes } from 'node:crypto';
import * as vscode from 'vscode';
import type { ChatChange, ChatController } from './controller';
import { renderMarkdown } from './render';
import type { Turn } from './history';

export const CHAT_VIEW_ID = 'leapfrog.chat';

/** One turn as the page sees it. */
interface TurnView {
  role: Turn['role'];
  html: string;
  note?: string;
}

type FromPage =
  | { type: 'ready' }
  | { type: 'send'; text: string }
  | { type: 'stop' }
  | { type: 'new' }
  | { type: 'copy'; code: string }
  | { type: 'insert'; code: string };

export class ChatViewProvider implements vscode.WebviewViewProvider, vscode.Disposable {
  private view: vscode.WebviewView | undefined;
  private pending = new Set<number>();
  private timer: NodeJS.Timeout | undefined;
  /** How long the last streamed re-render took (sets the pause before the next). */
  private renderMs = 0;
  private lastEditor: vscode.TextEditor | undefined;
  private readonly subs: vscode.Disposable[] = [];

  constructor(
    private readonly extensionUri: vscode.Uri,
    private readonly chat: ChatController,
  ) {
    this.lastEditor = vscode.window.activeTextEditor;
    this.subs.push(
      chat.onDidChange((c) => this.onChange(c)),
      // The webview takes focus when clicked, so "insert at cursor" means the last editor.
      vscode.window.onDidChangeActiveTextEditor((e) => {
        if (e) this.lastEditor = e;
      }),
    );
  }

  resolveWebviewView(view: vscode.WebviewView): void {
    this.view = view;
    const media = vscode.Uri.joinPath(this.extensionUri, 'media');
    view.webview.options = { enableScripts: true, localResourceRoots: [media] };
    view.webview.html = this.html(view.webview, media);
    view.webview.onDidReceiveMessage((m: FromPage) => this.onMessage(m));
    view.onDidDispose(() => {
      if (this.view === view) this.view = undefined;
    });
  }

  private html(webview: vscode.Webview, media: vscode.Uri): string {
    const nonce = randomBytes(16).toString('base64');
    const script = webview.asWebviewUri(vscode.Uri.joinPath(media, 'chat.js'));
    const style = webview.asWebviewUri(vscode.Uri.joinPath(media, 'chat.css'));
    // Strict: our one script by nonce, our stylesheet, nothing remote, no inline anything.
    const csp = [
      "default-src 'none'",
      `style-src ${webview.cspSource}`,
      `script-src 'nonce-${nonce}'`,
      `img-src ${webview.cspSource}`,
      `font-src ${webview.cspSource}`,
    ].join('; ');
    return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="UTF-8">
<meta http-equiv="Content-Security-Policy" content="${csp}">
<meta name="viewport" content="width=device-width, initial-scale=1.0">
<link rel="stylesheet" href="${style}">
<title>Leapfrog Chat</title>
</head>
<body>
<div id="toolbar"><button id="new-chat" title="New chat">New chat</button></div>
<div id="messages" role="log" aria-live="polite"></div>
<div id="empty" class="empty">Ask about your code. Everything runs on this machine.</div>
<form id="composer">
  <textarea id="input" rows="3" placeholder="Ask Leapfrog… (Enter to send, Shift+Enter for a new line)" aria-label="Message"></textarea>
  <div class="composer-actions">
    <button id="send" type="submit">Send</button>
    <button id="stop" type="button" hidden>Stop</button>
  </div>
</form>
<script nonce="${nonce}" src="${script}"></script>
</body>
</html>`;
  }

  private turnView(t: Turn): TurnView {
    return { role: t.role, html: renderMarkdown(t.text), note: t.note };
  }

  private postAll(): void {
    void this.view?.webview.postMessage({
      type: 'all',
      turns: this.chat.turns.map((t) => this.turnView(t)),
      busy: this.chat.busy,
    });
  }

  private onChange(c: ChatChange): void {
    if (!this.view) return;
    if (c.kind === 'all') {
      this.pending.clear();
      this.postAll();
      return;
    }
    // Deltas arrive per token; re-rendering the growing reply ~20 times a second is plenty.
    // A huge reply takes longer to render each time: the pause grows with it, so the extension
    // host (and the page re-parsing the HTML) spend at most a fifth of their time on it.
    this.pending.add(c.index);
    if (this.timer) return;
    this.timer = setTimeout(
      () => {
        this.timer = undefined;
        const started = Date.now();
        for (const index of this.pending) {
          const t = this.chat.turns[index];
          if (t)
            void this.view?.webview.postMessage({
              type: 'turn',
              index,
              turn: this.turnView(t),
              busy: this.chat.busy,
            });
        }
        this.pending.clear();
        this.renderMs = Date.now() - started;
      },
      Math.max(50, 4 * this.renderMs),
    );
  }

  private async onMessage(m: FromPage): Promise<void> {
    switch (m.type) {
      case 'ready':
        this.postAll();
        break;
      case 'send':
        await this.chat.send(String(m.text ?? ''));
        break;
      case 'stop':
        this.chat.stop();
        break;
      case 'new':
        this.chat.newChat();
        break;
      case 'copy':
        await vscode.env.clipboard.writeText(String(m.code ?? ''));
        void vscode.window.setStatusBarMessage('Leapfrog: copied', 1500);
        break;
      case 'insert':
        await this.insert(String(m.code ?? ''));
        break;
    }
  }

  private async insert(code: string): Promise<void> {
    const editor =
      this.lastEditor && vscode.window.visibleTextEditors.includes(this.lastEditor)
        ? this.lastEditor
        : vscode.window.visibleTextEditors[0];
    if (!editor) {
      void vscode.window.showInformationMessage(
        'Leapfrog: open an editor to insert the code into.',
      );
      return;
    }
    await editor.edit((b) => {
      for (const sel of editor.selections) b.replace(sel, code);
    });
    await vscode.window.showTextDocument(editor.document, editor.viewColumn);
  }

  dispose(): void {
    if (this.timer) clearTimeout(this.timer);
    for (const s of this.subs) s.dispose();
  }
}
