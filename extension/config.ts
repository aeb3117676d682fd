// Typed access to the `leapfrog.*` settings, so the rest of the extension never spells a key.
// The engine's settings reach the sidecar twice: as `initializationOptions` when it starts
// (sidecar.ts), and afterwards as `workspace/didChangeConfiguration`, which
// vscode-languageclient sends by itself for the `leapfrog` section; the sidecar applies
// them without a restart (engine/server/settings.ts).
import * as vscode from 'vscode';
import {
  GENERATION_DEFAULTS,
  expandSettingPath,
  type BackendKind,
  type LeapfrogInitializationOptions,
  type SpeculationMode,
} from '../engine/protocol';

export interface EngineSettings {
  /** Empty: the bundled model. */
  model: string;
  draftModel: string;
  backend: BackendKind;
  /** 0: let the engine pick (physical cores). */
  threads: number;
  speculation: { mode: SpeculationMode; budget: number };
  /** An OpenAI-compatible server instead of the local model; empty: the local model. */
  endpoint: string;
  endpointModel: string;
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
  return expandSettingPath(p, {
    home: process.env.HOME,
    workspaceFolder: vscode.workspace.workspaceFolders?.[0]?.uri.fsPath,
  });
}

export function engineSettings(): EngineSettings {
  const c = section();
  const d = GENERATION_DEFAULTS;
  return {
    model: expandPath(c.get<string>('model', '')),
    draftModel: expandPath(c.get<string>('draftModel', '')),
    backend: c.get<BackendKind>('backend', d.backend),
    threads: c.get<number>('threads', d.threads),
    speculation: {
      mode: c.get<SpeculationMode>('speculation.mode', d.speculation.mode),
      budget: c.get<number>('speculation.budget', d.speculation.budget),
    },
    endpoint: c.get<string>('endpoint', '').trim(),
    endpointModel: c.get<string>('endpointModel', '').trim(),
  };
}

/**
 * What the sidecar is started with (the shape is engine/protocol.ts's). `endpointApiKey`
 * comes from SecretStorage (extension/endpoint-key.ts), not from the settings.
 */
export function initializationOptions(
  s: EngineSettings,
  endpointApiKey?: string,
): LeapfrogInitializationOptions {
  return {
    speculation: { ...s.speculation },
    backend: s.backend,
    threads: s.threads,
    model: s.model || undefined,
    draft: s.draftModel || undefined,
    endpoint: s.endpoint || undefined,
    endpointModel: s.endpointModel || undefined,
    endpointApiKey,
  };
}

export function completionSettings(): CompletionSettings {
  const c = section();
  return {
    enabled: c.get<boolean>('completion.enabled', true),
    languages: c.get<Record<string, boolean>>('completion.languages', {}),
    debounceMs: c.get<number>('completion.debounceMs', 0),
    maxTokens: c.get<number>('completion.maxTokens', 128),
  };
}

export function completionEnabledFor(languageId: string): boolean {
  const s = completionSettings();
  return s.languages[languageId] ?? s.enabled;
}

export async function update(key: string, value: unknown): Promise<void> {
  await section().update(key, value, vscode.ConfigurationTarget.Global);
}
