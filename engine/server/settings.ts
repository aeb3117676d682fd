// The language server's settings: `initializationOptions` at start, then the standard
// `workspace/didChangeConfiguration` with `settings.leapfrog` (the section as VS Code nests
// it). Speculation mode and budget go to the engine core and apply to the next request;
// model, draft, backend and threads make a load request, and the server reloads when that
// request differs from the last one (VS Code sends the whole section on every change, and
// once right after start: an unchanged model must not reload). A field counts as changed
// when it differs from the value the previous notification carried, so a model chosen
// through `leapfrog/loadModel` stays until the model setting itself changes.
import { homedir } from 'node:os';
import {
  BACKENDS,
  GENERATION_DEFAULTS,
  expandSettingPath,
  type BackendKind,
  type LeapfrogInitializationOptions,
  type LeapfrogSettings,
} from '../protocol';
import { clampBudget, isSpeculationMode } from '../generation/generation-config';
import type { GenerationSettings } from '../generation/generation-config';
import { resolveModelPaths } from '../models/model-paths';
import type { LoadRequest } from '../models/model-host';

/** The server's command line: its defaults where a setting is empty. */
export interface ServerDefaults {
  model?: string;
  draft?: string;
  threads?: number;
}

interface Wanted {
  /** undefined: the default (command line, else the bundled model). */
  model?: string;
  /** undefined: the default; null: no draft. */
  draft?: string | null;
  backend: BackendKind;
  /** 0: the default (command line, else the physical cores). */
  threads: number;
}

export class ServerSettings {
  private wanted: Wanted = {
    backend: GENERATION_DEFAULTS.backend,
    threads: GENERATION_DEFAULTS.threads,
  };
  private workspaceFolder: string | undefined;
  private lastLoad = '';
  /** Each field's value in the previous didChangeConfiguration (JSON). */
  private readonly seen = new Map<string, string>();

  constructor(
    private readonly defaults: ServerDefaults,
    private readonly warn: (message: string) => void = () => {},
  ) {}

  /**
   * Takes `initializationOptions`; returns the generation settings to start with.
   * `workspaceFolder` (a file system path) expands `${workspaceFolder}` in later settings.
   */
  initialize(raw: unknown, base: GenerationSettings, workspaceFolder?: string): GenerationSettings {
    this.workspaceFolder = workspaceFolder;
    const init = (isObject(raw) ? raw : {}) as LeapfrogInitializationOptions;
    if (typeof init.model === 'string') this.wanted.model = this.path(init.model);
    if (init.draft === null) this.wanted.draft = null;
    else if (typeof init.draft === 'string') this.wanted.draft = this.path(init.draft);
    this.takeEngine(init);
    return this.speculation(init.speculation, base);
  }

  /**
   * Takes `params.settings` of didChangeConfiguration. Fields that are absent keep their
   * value. Returns the new generation settings and whether the model must be reloaded.
   */
  change(
    raw: unknown,
    base: GenerationSettings,
  ): { settings: GenerationSettings; reload: boolean } {
    const section = isObject(raw) && isObject(raw.leapfrog) ? raw.leapfrog : undefined;
    if (!section) return { settings: base, reload: false };
    const s = section as LeapfrogSettings;
    const changed = (key: keyof LeapfrogSettings): boolean => {
      if (s[key] === undefined) return false;
      const json = JSON.stringify(s[key]);
      if (this.seen.get(key) === json) return false;
      this.seen.set(key, json);
      return true;
    };
    if (changed('model') && typeof s.model === 'string') this.wanted.model = this.path(s.model);
    if (changed('draftModel') && typeof s.draftModel === 'string') {
      this.wanted.draft = this.path(s.draftModel);
    }
    this.takeEngine({
      backend: changed('backend') ? s.backend : undefined,
      threads: changed('threads') ? s.threads : undefined,
    });
    const settings = this.speculation(s.speculation, base);
    return { settings, reload: this.key(this.loadRequest()) !== this.lastLoad };
  }

  /** `leapfrog/loadModel` chose these files: later settings changes start from them. */
  chooseModel(model: string, draft: string | null | undefined): void {
    this.wanted.model = model;
    this.wanted.draft = draft ?? null;
  }

  /** What to load now; remembered as the last load asked for. */
  loadRequest(): LoadRequest {
    const w = this.wanted;
    const paths = resolveModelPaths({
      model: w.model ?? this.defaults.model,
      draft: w.draft !== undefined ? w.draft : this.defaults.draft,
    });
    return {
      ...paths,
      threads: w.threads > 0 ? w.threads : (this.defaults.threads ?? 0),
      backend: w.backend,
    };
  }

  /** Call when a load is started, so that the same settings do not start it again. */
  noteLoad(req: LoadRequest): void {
    this.lastLoad = this.key(req);
  }

  private key(req: LoadRequest): string {
    return JSON.stringify([
      req.model,
      req.draft,
      req.threads ?? 0,
      req.backend ?? GENERATION_DEFAULTS.backend,
    ]);
  }

  private path(p: string): string | undefined {
    const expanded = expandSettingPath(p, {
      home: homedir(),
      workspaceFolder: this.workspaceFolder,
    });
    return expanded || undefined;
  }

  private takeEngine(s: { backend?: unknown; threads?: unknown }): void {
    if (s.backend !== undefined) {
      if ((BACKENDS as readonly unknown[]).includes(s.backend)) {
        this.wanted.backend = s.backend as BackendKind;
      } else this.warn(`ignoring unknown backend ${JSON.stringify(s.backend)}`);
    }
    if (s.threads !== undefined) {
      if (typeof s.threads === 'number' && Number.isInteger(s.threads) && s.threads >= 0) {
        this.wanted.threads = s.threads;
      } else this.warn(`ignoring threads ${JSON.stringify(s.threads)} (an integer ≥ 0)`);
    }
  }

  private speculation(raw: unknown, base: GenerationSettings): GenerationSettings {
    if (!isObject(raw)) return base;
    const speculation = { ...base.speculation };
    if (raw.mode !== undefined) {
      if (isSpeculationMode(raw.mode)) speculation.mode = raw.mode;
      else this.warn(`ignoring unknown speculation mode ${JSON.stringify(raw.mode)}`);
    }
    if (raw.budget !== undefined) {
      if (typeof raw.budget === 'number') speculation.budget = clampBudget(raw.budget);
      else this.warn(`ignoring speculation budget ${JSON.stringify(raw.budget)}`);
    }
    return { ...base, speculation };
  }
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
