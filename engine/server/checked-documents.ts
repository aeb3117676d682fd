// The document mirror's constructor and updater, with the params checked first. TextDocuments
// trusts didOpen/didChange as they arrive: a uri or text of the wrong type was stored as it
// was and then broke every listener that read it (a didOpen whose textDocument.uri was a
// number threw a TypeError with a stack trace in fsPathOf), and a fractional position in an
// edit silently corrupted the mirrored text. A throw here is reported by vscode-jsonrpc as
// "Notification handler 'textDocument/didOpen' failed with message: …" (a notification
// has no answer) and nothing is stored or changed.
import type { TextDocumentsConfiguration } from 'vscode-languageserver/node';
import {
  TextDocument,
  type TextDocumentContentChangeEvent,
} from 'vscode-languageserver-textdocument';

export const checkedDocuments: TextDocumentsConfiguration<TextDocument> = {
  create(uri, languageId, version, content) {
    if (typeof uri !== 'string') throw new Error('textDocument.uri must be a string');
    if (typeof content !== 'string')
      throw new Error(`textDocument.text of ${uri} must be a string`);
    if (typeof languageId !== 'string')
      throw new Error(`textDocument.languageId of ${uri} must be a string`);
    if (!Number.isInteger(version))
      throw new Error(`textDocument.version of ${uri} must be an integer`);
    return TextDocument.create(uri, languageId, version, content);
  },
  update(document, changes, version) {
    if (!Array.isArray(changes))
      throw new Error(`contentChanges of ${document.uri} must be an array`);
    if (!Number.isInteger(version))
      throw new Error(`textDocument.version of ${document.uri} must be an integer`);
    for (const change of changes) {
      const why = badChange(change);
      if (why)
        throw new Error(`an edit of ${document.uri} is not valid: ${why} (nothing was changed)`);
    }
    return TextDocument.update(document, changes, version);
  },
};

/** Why one content change cannot be applied, or undefined when it can. */
function badChange(change: TextDocumentContentChangeEvent): string | undefined {
  if (typeof change !== 'object' || change === null) return 'a change must be an object';
  if (typeof change.text !== 'string') return 'text must be a string';
  if (!('range' in change) || change.range === undefined) return undefined; // the whole text
  const { range } = change;
  const positions = typeof range === 'object' && range !== null ? [range.start, range.end] : [];
  if (positions.length === 0) return 'range must be an object';
  for (const p of positions) {
    // Integers only: past the end is clamped by TextDocument, a fraction would corrupt it.
    if (
      typeof p !== 'object' ||
      p === null ||
      !Number.isInteger(p.line) ||
      !Number.isInteger(p.character)
    ) {
      return 'range positions must have integer line and character';
    }
  }
  return undefined;
}
