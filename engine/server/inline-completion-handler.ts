// textDocument/inlineCompletion: the mirrored document → CompletionService → one item
// inserted at the cursor (or none). A newer request for the same document supersedes this
// one (answered with no items); $/cancelRequest aborts the native work. leapfrog/prefetch:
// the same completion computed ahead, for a cursor the user is about to reach.
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
import { promptPath, type CompletionRequest } from '../completion/completion-service';
import type {
  CompletionGrownParams,
  LeapfrogInlineCompletionItem,
  PrefetchParams,
} from '../protocol';
import { log } from './log';
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
  /** Told when a partial answer's suggestion has grown (leapfrog/completionGrown). */
  onGrown: (p: CompletionGrownParams) => void = () => {},
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
  const call = core.completions.complete(requestAt(doc, params.position));
  const sub = onCancel(token, () => call.cancel());
  try {
    const result = await call.result;
    if (result.status === 'cancelled') throw cancelledError();
    if (result.status !== 'ok' || !result.text) return { items: [] };
    const at = params.position;
    if (result.partial && result.grown) {
      const position = { line: at.line, character: at.character };
      void result.grown.then((grew) => grew && onGrown({ uri, position }));
    }
    const item: LeapfrogInlineCompletionItem = {
      insertText: result.text,
      range: { start: at, end: at },
      ...(result.partial ? { partial: true } : {}),
    };
    return { items: [item] };
  } catch (err) {
    throw toResponseError(err, 'inline completion');
  } finally {
    sub.dispose();
  }
}

/**
 * leapfrog/prefetch. A notification has no answer: a document the server does not have or
 * a cursor outside it (the edit that moved it may not have arrived) is logged and dropped.
 */
export function handlePrefetch(
  core: EngineCore,
  documents: TextDocuments<TextDocument>,
  params: PrefetchParams,
): void {
  const doc = typeof params?.uri === 'string' ? documents.get(params.uri) : undefined;
  const pos = params?.position;
  if (!doc || typeof pos?.line !== 'number' || typeof pos.character !== 'number') {
    log('info', 'prefetch: no such document or position; ignored');
    return;
  }
  const call = core.completions.prefetch(requestAt(doc, pos));
  call.result.catch((err: unknown) =>
    log('info', `prefetch: ${err instanceof Error ? err.message : String(err)}`),
  );
}

function requestAt(
  doc: TextDocument,
  position: { line: number; character: number },
): CompletionRequest {
  const fsPath = fsPathOf(doc.uri);
  return {
    uri: doc.uri,
    path: promptPath(fsPath),
    repoName: repoNameFor(fsPath),
    text: doc.getText(),
    line: position.line,
    character: position.character,
  };
}
