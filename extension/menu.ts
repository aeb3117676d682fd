// What a click on the status-bar item offers: snooze, enable/disable (globally and for the
// current language), choose model, show log, restart engine.
import { existsSync } from 'node:fs';
import * as vscode from 'vscode';
import {
  LoadModelRequest,
  MODEL_SOURCES,
  ModelsRequest,
  type DiscoveredModel,
  type ModelSource,
  type ModelsResult,
} from '../engine/protocol';
import { completionSettings, expandPath } from './config';
import type { CompletionGate } from './gate';
import type { Sidecar } from './sidecar';

interface Entry extends vscode.QuickPickItem {
  run: () => unknown;
}

export async function showStatusMenu(gate: CompletionGate): Promise<void> {
  const lang = vscode.window.activeTextEditor?.document.languageId;
  const s = completionSettings();
  const entries: Entry[] = [];
  if (gate.snoozedUntil > 0) {
    entries.push({ label: '$(play) Resume completions', run: () => gate.resume() });
  } else {
    entries.push(
      { label: '$(debug-pause) Snooze for 5 minutes', run: () => gate.snooze(5) },
      { label: '$(debug-pause) Snooze for 30 minutes', run: () => gate.snooze(30) },
      { label: '$(debug-pause) Snooze for 1 hour', run: () => gate.snooze(60) },
    );
  }
  entries.push(
    s.enabled
      ? {
          label: '$(circle-slash) Disable completions everywhere',
          run: () => gate.setGlobal(false),
        }
      : { label: '$(check) Enable completions everywhere', run: () => gate.setGlobal(true) },
  );
  if (lang) {
    const on = s.languages[lang] ?? s.enabled;
    entries.push(
      on
        ? {
            label: `$(circle-slash) Disable completions for ${lang}`,
            run: () => gate.setLanguage(lang, false),
          }
        : {
            label: `$(check) Enable completions for ${lang}`,
            run: () => gate.setLanguage(lang, true),
          },
    );
  }
  entries.push(
    {
      label: '$(file-binary) Choose model…',
      run: () => vscode.commands.executeCommand('leapfrog.chooseModel'),
    },
    {
      label: '$(cloud-download) Download a model…',
      run: () => vscode.commands.executeCommand('leapfrog.downloadModel'),
    },
    { label: '$(output) Show log', run: () => vscode.commands.executeCommand('leapfrog.showLog') },
    {
      label: '$(debug-restart) Restart engine',
      run: () => vscode.commands.executeCommand('leapfrog.restart'),
    },
    {
      label: '$(comment-discussion) Open chat',
      run: () => vscode.commands.executeCommand('leapfrog.chat.focus'),
    },
  );
  const pick = await vscode.window.showQuickPick(entries, {
    title: 'Leapfrog',
    placeHolder: 'Leapfrog',
  });
  await pick?.run();
}

/**
 * Bundled model, a recently used one, a model discovered where users keep them (Ollama, LM
 * Studio, the Hugging Face and llama.cpp caches, `leapfrog.modelFolders`: asked of the
 * sidecar, `leapfrog/models`), or any GGUF on disk; stored in `leapfrog.model`. A discovered
 * target with a paired draft offers it (`leapfrog.draftModel`). Without a running sidecar
 * the list is the bundled, recent and Browse entries alone.
 */
export async function chooseModel(
  state: vscode.Memento,
  sidecar: Sidecar,
  downloadFolder: string,
): Promise<void> {
  const recent = state.get<string[]>('leapfrog.recentModels', []);
  const fixed: Entry[] = [
    { label: '$(package) Bundled model', description: 'leapfrog-coder', run: () => set('') },
    ...recent.map((p) => ({
      label: `$(history) ${p.split('/').pop()}`,
      description: p,
      run: () => set(p),
    })),
  ];
  const browse: Entry = {
    label: '$(folder-opened) Browse for a GGUF file…',
    run: async () => {
      const uris = await vscode.window.showOpenDialog({
        canSelectMany: false,
        filters: { 'GGUF model': ['gguf'] },
        title: 'Choose a GGUF model',
      });
      if (uris?.[0]) await set(uris[0].fsPath);
    },
  };
  const entries = discoveredEntries(sidecar).then((found) => [...fixed, ...found, browse]);
  const pick = await vscode.window.showQuickPick(entries, {
    title: 'Leapfrog: choose model',
    matchOnDescription: true,
    matchOnDetail: true,
  });
  await pick?.run();

  async function set(path: string): Promise<void> {
    if (path)
      await state.update(
        'leapfrog.recentModels',
        [path, ...recent.filter((p) => p !== path)].slice(0, 5),
      );
    // The running sidecar hears of the change and reloads the model itself (sidecar.ts).
    await vscode.workspace
      .getConfiguration('leapfrog')
      .update('model', path, vscode.ConfigurationTarget.Global);
  }

  /** A discovered target: with its paired draft (when there is one and the user wants it). */
  async function setDiscovered(model: DiscoveredModel, byPath: Map<string, DiscoveredModel>) {
    let draft = '';
    const paired = model.draft ? byPath.get(model.draft) : undefined;
    if (paired) {
      const withDraft = {
        label: `$(rocket) With draft ${paired.name}`,
        description: describe(paired),
        detail: 'Speculative decoding: the small model proposes, the target verifies.',
      };
      const choice = await vscode.window.showQuickPick(
        [withDraft, { label: '$(circle-slash) Without draft' }],
        { title: `Leapfrog: ${model.name}`, placeHolder: 'Use a draft model for speculation?' },
      );
      if (!choice) return;
      if (choice === withDraft) draft = paired.path;
    }
    // Both files in one load: two settings changes one after the other would make the
    // sidecar load the new target twice (with the old draft, then with the new one).
    void sidecar.client
      ?.sendRequest(LoadModelRequest, { model: model.path, draft: draft || null })
      .catch(() => undefined); // a failure reaches the status bar through leapfrog/status
    await vscode.workspace
      .getConfiguration('leapfrog')
      .update('draftModel', draft, vscode.ConfigurationTarget.Global);
    await set(model.path);
  }

  async function discoveredEntries(engine: Sidecar): Promise<Entry[]> {
    const client = engine.client;
    if (!client) return [];
    const folders = vscode.workspace
      .getConfiguration('leapfrog')
      .get<string[]>('modelFolders', [])
      .filter((f): f is string => typeof f === 'string')
      .map(expandPath)
      .concat(existsSync(downloadFolder) ? [downloadFolder] : []); // what Download Model… fetched
    let result: ModelsResult;
    try {
      result = await withTimeout(client.sendRequest(ModelsRequest, { folders }), 20_000);
    } catch {
      return []; // Browse still works
    }
    const byPath = new Map(result.models.map((m) => [m.path, m]));
    const out: Entry[] = [];
    for (const source of MODEL_SOURCES) {
      const models = result.models.filter((m) => m.source === source);
      if (models.length === 0) continue;
      out.push({
        label: SOURCE_LABELS[source],
        kind: vscode.QuickPickItemKind.Separator,
        run: noop,
      });
      for (const m of models) {
        out.push(
          m.supported
            ? {
                label: `$(file-binary) ${m.name}`,
                description: describe(m) + (m.draft ? ' · draft available' : ''),
                detail: m.path,
                run: () => setDiscovered(m, byPath),
              }
            : {
                // QuickPick items cannot be disabled: the reason shows, and a pick says it again.
                label: `$(circle-slash) ${m.name}`,
                description: describe(m),
                detail: `Cannot be loaded: ${m.reason ?? 'unsupported'}`,
                run: () =>
                  vscode.window.showWarningMessage(
                    `Leapfrog cannot load ${m.name}: ${m.reason ?? 'unsupported'}`,
                  ),
              },
        );
      }
    }
    if (out.length > 0)
      out.push({ label: '', kind: vscode.QuickPickItemKind.Separator, run: noop });
    return out;
  }
}

const SOURCE_LABELS: Record<ModelSource, string> = {
  ollama: 'Ollama',
  lmstudio: 'LM Studio',
  huggingface: 'Hugging Face cache',
  'llama.cpp': 'llama.cpp cache',
  folder: 'Model folders',
};

function noop(): void {}

/** `qwen2 · 7.6B · Q4_K_M · FIM · 4.7 GB` (under a gigabyte: `46 MB`, at least 1). */
function describe(m: DiscoveredModel): string {
  const parts = [
    m.architecture,
    m.parameters ? formatCount(m.parameters) : null,
    m.quantization,
    m.fim ? 'FIM' : null,
    m.bytes >= 1e9
      ? `${(m.bytes / 1e9).toFixed(1)} GB`
      : `${Math.max(1, Math.round(m.bytes / 1e6))} MB`,
  ];
  return parts.filter((p): p is string => !!p).join(' · ');
}

function formatCount(n: number): string {
  if (n >= 1e9) return `${(n / 1e9).toFixed(1)}B`;
  if (n >= 1e6) return `${Math.round(n / 1e6)}M`;
  return `${Math.round(n / 1e3)}K`;
}

function withTimeout<T>(p: Thenable<T>, ms: number): Promise<T> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('timed out')), ms);
    p.then(
      (v) => {
        clearTimeout(timer);
        resolve(v);
      },
      (e: unknown) => {
        clearTimeout(timer);
        reject(e instanceof Error ? e : new Error(String(e)));
      },
    );
  });
}
