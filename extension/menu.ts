// What a click on the status-bar item offers: snooze, enable/disable (globally and for the
// current language), choose model, show log, restart engine.
import * as vscode from 'vscode';
import { completionSettings } from './config';
import type { CompletionGate } from './gate';

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

/** Bundled model, a recently used one, or any GGUF on disk; stored in `leapfrog.model`. */
export async function chooseModel(state: vscode.Memento): Promise<void> {
  const recent = state.get<string[]>('leapfrog.recentModels', []);
  const entries: Entry[] = [
    { label: '$(package) Bundled model', description: 'leapfrog-coder', run: () => set('') },
    ...recent.map((p) => ({
      label: `$(history) ${p.split('/').pop()}`,
      description: p,
      run: () => set(p),
    })),
    {
      label: '$(folder-opened) Browse for a GGUF file…',
      run: async () => {
        const uris = await vscode.window.showOpenDialog({
          canSelectMany: false,
          filters: { 'GGUF model': ['gguf'] },
          title: 'Choose a GGUF model',
        });
        if (uris?.[0]) await set(uris[0].fsPath);
      },
    },
  ];
  const pick = await vscode.window.showQuickPick(entries, { title: 'Leapfrog: choose model' });
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
}
