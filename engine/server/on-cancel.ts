// Runs `cancel` when the request's token is cancelled — also when it already was. A
// $/cancelRequest that arrives while the request still waits in vscode-jsonrpc's queue
// yields a token that is cancelled from the start, and such a token's
// onCancellationRequested never fires; without this check the work would run to the end.
import type { CancellationToken, Disposable } from 'vscode-languageserver/node';

export function onCancel(token: CancellationToken, cancel: () => void): Disposable {
  if (token.isCancellationRequested) {
    cancel();
    return { dispose: () => {} };
  }
  return token.onCancellationRequested(cancel);
}
