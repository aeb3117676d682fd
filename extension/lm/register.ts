// Offers the loaded local model to VS Code's chat and to other extensions through the
// Language Model API, where VS Code has it (1.104+); on older versions it logs one line
// and does nothing, so the extension works the same there.
import * as vscode from 'vscode';
import type { Log } from '../log';
import type { Sidecar } from '../sidecar';
import { languageModelApi } from './api';
import { connectionEngine } from './engine-port';
import { LeapfrogChatProvider, VENDOR } from './provider';

export function registerLanguageModelProvider(
  sidecar: Sidecar,
  log: Log,
): vscode.Disposable | undefined {
  const api = languageModelApi(vscode.lm);
  if (!api) {
    log.info(
      `VS Code ${vscode.version} has no Language Model Chat Provider API (1.104+): ` +
        'the local model is not offered to VS Code chat',
    );
    return undefined;
  }
  const changed = new vscode.EventEmitter<void>();
  // VS Code asks for the model list again when this fires: when the engine becomes usable
  // or stops, and when another model is loaded.
  let shown = '';
  const watch = sidecar.onDidChange((view) => {
    const usable = view.phase === 'ready' || view.phase === 'busy';
    const now = usable ? (view.engine?.modelPath ?? '') : '';
    if (now !== shown) {
      shown = now;
      changed.fire();
    }
  });
  const engine = connectionEngine(
    () => sidecar.client,
    (listener) => sidecar.onChatDelta(listener),
    () => sidecar.view.message ?? sidecar.view.phase,
  );
  const provider = new LeapfrogChatProvider(
    engine,
    (value) => new vscode.LanguageModelTextPart(value),
    changed.event,
  );
  const registration = api.registerLanguageModelChatProvider(VENDOR, provider);
  log.info('offering the local model to VS Code chat (Language Model API)');
  return vscode.Disposable.from(registration, watch, changed);
}
