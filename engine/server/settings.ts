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
import type { EndpointConfig } from '../remote/endpoint';

/** The server's command line: its defaults where a setting is empty. */
export interface ServerDefaults {
  model?: string;
  draft?: string;
  threads?: number;
  /** --endpoint, --endpoint-model, --api-key (or LEAPFROG_API_KEY). */
  endpoint?: string;
  endpointModel?: string;
  apiKey?: string;
}

/** The endpoint fields of the settings; undefined: the server's default. */
interface WantedEndpoint {
  url?: string;
  model?: string;
  apiKey?: string;
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
  private endpointWanted: WantedEndpoint = {};
  private lastEndpoint = '';
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
    this.takeEndpoint(init);
    return this.speculation(init.speculation, base);
  }

  /**
   * Takes `params.settings` of didChangeConfiguration. Fields that are absent keep their
   * value. Returns the new generation settings and whether the model must be reloaded.
   */
  change(
    raw: unknown,
    base: GenerationSettings,
  ): {
    settings: GenerationSettings;
    reload: boolean;
    endpointChanged: boolean;
    /** The completion deadline, when the section sets one. */
    deadlineMs?: number;
  } {
    const section = isObject(raw) && isObject(raw.leapfrog) ? raw.leapfrog : undefined;
    if (!section) return { settings: base, reload: false, endpointChanged: false };
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
    this.takeEndpoint({
      endpoint: changed('endpoint') ? s.endpoint : undefined,
      endpointModel: changed('endpointModel') ? s.endpointModel : undefined,
      endpointApiKey: changed('endpointApiKey') ? s.endpointApiKey : undefined,
    });
    const settings = this.speculation(s.speculation, base);
    return {
      settings,
      reload: this.key(this.loadRequest()) !== this.lastLoad,
      endpointChanged: JSON.stringify(this.endpoint() ?? null) !== this.lastEndpoint,
      ...this.deadline(s.completion),
    };
  }

  /**
   * The endpoint that completions and chat go to now, or undefined for the local model:
   * the setting, else the command line. An empty setting means the command line's.
   */
  endpoint(): EndpointConfig | undefined {
    const w = this.endpointWanted;
    const url = w.url ?? this.defaults.endpoint;
    if (!url) return undefined;
    const model = w.model ?? this.defaults.endpointModel;
    const apiKey = w.apiKey ?? this.defaults.apiKey;
    return {
      url,
      ...(model ? { model } : {}),
      ...(apiKey ? { apiKey } : {}),
    };
  }

  /** Call when switching to `endpoint()` (or to the local model), so the same one is not redone. */
  noteEndpoint(config: EndpointConfig | undefined): void {
    this.lastEndpoint = JSON.stringify(config ?? null);
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

  /** Strings; empty means the default. Anything else is ignored with a warning. */
  private takeEndpoint(s: {
    endpoint?: unknown;
    endpointModel?: unknown;
    endpointApiKey?: unknown;
  }): void {
    const fields = [
      ['endpoint', s.endpoint, 'url'],
      ['endpointModel', s.endpointModel, 'model'],
      ['endpointApiKey', s.endpointApiKey, 'apiKey'],
    ] as const;
    for (const [name, value, key] of fields) {
      if (value === undefined) continue;
      if (typeof value !== 'string') {
        // The value itself is not repeated: it may be a key.
        this.warn(`ignoring ${name}: a string was expected, got ${typeof value}`);
        continue;
      }
      this.endpointWanted[key] = value.trim() || undefined;
    }
  }

  private deadline(raw: unknown): { deadlineMs?: number } {
    if (!isObject(raw) || raw.deadlineMs === undefined) return {};
    const ms = raw.deadlineMs;
    if (typeof ms === 'number' && Number.isFinite(ms) && ms >= 0) {
      return { deadlineMs: Math.min(Math.round(ms), 60_000) };
    }
    this.warn(`ignoring completion.deadlineMs ${JSON.stringify(ms)} (milliseconds ≥ 0)`);
    return {};
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
