// Typed access to the `leapfrog.*` settings, so the rest of the extension never spells a key.
import * as vscode from 'vscode';

export type SpeculationMode = 'auto' | 'off' | 'ngram' | 'draft';
export type Backend = 'auto' | 'cpu' | 'cuda' | 'metal';

export interface EngineSettings {
  /** Empty: the bundled model. */
  model: string;
  draftModel: string;
  backend: Backend;
  /** 0: let the engine pick (physical cores). */
  threads: number;
  speculation: SpeculationMode;
  speculationBudget: number;
}

export interface CompletionSettings {
  enabled: boolean;
  /** languageId → enabled; languages not listed follow `enabled`. */
  languages: Record<string, boolean>;
  /** Smallest wait after a keystroke before asking the engine; raised adaptively. */
  debounceMs: number;
  maxTokens: number;
}

function section(): vscode.WorkspaceConfiguration {
  return vscode.workspace.getConfiguration('leapfrog');
}

/** Expands `~` and `${workspaceFolder}` so users can write portable paths. */
export function expandPath(p: string): string {
  let out = p.trim();
  if (out.startsWith('~/')) out = (process.env.HOME ?? '') + out.slice(1);
  const ws = vscode.workspace.workspaceFolders?.[0]?.uri.fsPath;
  if (ws) out = out.replace(/\$\{workspaceFolder\}/g, ws);
  return out;
}

export function engineSettings(): EngineSettings {
  const c = section();
  return {
    model: expandPath(c.get<string>('model', '')),
    draftModel: expandPath(c.get<string>('draftModel', '')),
    backend: c.get<Backend>('backend', 'auto'),
    threads: c.get<number>('threads', 0),
    speculation: c.get<SpeculationMode>('speculation.mode', 'auto'),
    speculationBudget: c.get<number>('speculation.budget', 16),
  };
}

export function completionSettings(): CompletionSettings {
  const c = section();
  return {
    enabled: c.get<boolean>('completion.enabled', true),
    languages: c.get<Record<string, boolean>>('completion.languages', {}),
    debounceMs: c.get<number>('completion.debounceMs', 60),
    maxTokens: c.get<number>('completion.maxTokens', 128),
  };
}

export function completionEnabledFor(languageId: string): boolean {
  const s = completionSettings();
  return s.languages[languageId] ?? s.enabled;
}

/** Settings whose change needs a new sidecar (they are its command line). */
export const ENGINE_KEYS = [
  'leapfrog.model',
  'leapfrog.draftModel',
  'leapfrog.backend',
  'leapfrog.threads',
  'leapfrog.speculation',
];

export async function update(key: string, value: unknown): Promise<void> {
  await section().update(key, value, vscode.ConfigurationTarget.Global);
}
