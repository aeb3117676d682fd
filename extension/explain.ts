// "Explain selection": opens the chat sidebar and streams an explanation of the selected code,
// with its file and language as context. With nothing selected, the current line is used.
import * as vscode from 'vscode';
import type { ChatController } from './chat/controller';
import { CHAT_VIEW_ID } from './chat/view';

const MAX_CHARS = 12_000;

export async function explainSelection(chat: ChatController): Promise<void> {
  const editor = vscode.window.activeTextEditor;
  if (!editor) {
    void vscode.window.showInformationMessage('Leapfrog: open a file and select code to explain.');
    return;
  }
  const doc = editor.document;
  const sel = editor.selection;
  let text = sel.isEmpty ? doc.lineAt(sel.active.line).text : doc.getText(sel);
  if (!text.trim()) {
    void vscode.window.showInformationMessage('Leapfrog: select some code to explain.');
    return;
  }
  if (text.length > MAX_CHARS) text = text.slice(0, MAX_CHARS);
  await vscode.commands.executeCommand(`${CHAT_VIEW_ID}.focus`);
  await chat.explain({
    selection: text,
    fileName: vscode.workspace.asRelativePath(doc.uri),
    languageId: doc.languageId,
  });
}
