// textDocument/inlineCompletion: the mirrored document → CompletionService → one item
// inserted at the cursor (or none). A newer request for the same document supersedes this
// one (answered with no items); $/cancelRequest aborts the native work.
import { fileURLToPath } from 'node:url';
import {
  ResponseError,
  ErrorCodes,
  type CancellationToken,
  type InlineCompletionList,
  type InlineCompletionParams,
  type TextDocuments,
} from 'vscode-languageserver/node';
import type { TextDocument } from 'vscode-languageserver-textdocument';
import type { EngineCore } from './engine-core';
import { promptPath } from '../completion/completion-service';
import { repoNameFor } from '../completion/repo-name';
import { onCancel } from './on-cancel';
import { cancelledError, requireFields, toResponseError } from './errors';

export function fsPathOf(uri: string): string {
  if (uri.startsWith('file:')) {
    try {
      return fileURLToPath(uri);
    } catch {
      // fall through
    }
  }
  return uri.replace(/^[a-z-]+:/i, '/');
}

export async function handleInlineCompletion(
  core: EngineCore,
  documents: TextDocuments<TextDocument>,
  params: InlineCompletionParams,
  token: CancellationToken,
): Promise<InlineCompletionList> {
  requireFields(params, { textDocument: 'object', position: 'object' });
  requireFields(params.textDocument, { uri: 'string' });
  requireFields(params.position, { line: 'number', character: 'number' });
  const uri = params.textDocument.uri;
  const doc = documents.get(uri);
  if (!doc)
    throw new ResponseError(
      ErrorCodes.InvalidParams,
      `unknown document ${uri} (send didOpen first)`,
    );
  const fsPath = fsPathOf(uri);
  const call = core.completions.complete({
    uri,
    path: promptPath(fsPath),
    repoName: repoNameFor(fsPath),
    text: doc.getText(),
    line: params.position.line,
    character: params.position.character,
  });
  const sub = onCancel(token, () => call.cancel());
  try {
    const result = await call.result;
    if (result.status === 'cancelled') throw cancelledError();
    if (result.status !== 'ok' || !result.text) return { items: [] };
    const at = params.position;
    return { items: [{ insertText: result.text, range: { start: at, end: at } }] };
  } catch (err) {
    throw toResponseError(err, 'inline completion');
  } finally {
    sub.dispose();
  }
}
