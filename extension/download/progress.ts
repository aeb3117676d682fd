// `leapfrog/downloadProgress` from the sidecar, routed to the download it belongs to. A
// JSON-RPC connection keeps one handler per method, so it is registered once per client
// and dispatches by download id (several downloads may run at once).
import type { LanguageClient } from 'vscode-languageclient/node';
import { DownloadProgressNotification, type DownloadProgressParams } from '../../engine/protocol';

type Listener = (p: DownloadProgressParams) => void;

const listeners = new Map<string, Listener>();
const wired = new WeakSet<LanguageClient>();

export function onDownloadProgress(
  client: LanguageClient,
  downloadId: string,
  listener: Listener,
): { dispose(): void } {
  if (!wired.has(client)) {
    wired.add(client);
    client.onNotification(DownloadProgressNotification, (p) => listeners.get(p.downloadId)?.(p));
  }
  listeners.set(downloadId, listener);
  return { dispose: () => listeners.delete(downloadId) };
}
