// The engine behind `leapfrog serve`: the model host (one target, an optional draft) and a
// pool of N native sessions on it, with the generation settings the command line chose.
// Requests that come while the model loads, or after its load failed, get a 503.
import { basename } from 'node:path';
import type { NativeSession } from '../native/addon';
import { ModelHost, type LoadedEngine, type LoadRequest } from '../models/model-host';
import type { GenerationSettings } from '../generation/generation-config';
import { SpeculationTotals } from '../generation/speculation-totals';
import { ApiError } from './api-error';
import { SessionPool } from './session-pool';

export interface ServeEngineOptions {
  addon: ConstructorParameters<typeof ModelHost>[0]['addon'];
  threads?: number;
  /** Context per session (absent: the engine's rule). */
  nCtx?: number;
  /** Generations at once (sessions). */
  parallel: number;
  settings: GenerationSettings;
}

export interface Ready {
  engine: LoadedEngine;
  pool: SessionPool;
  /** The id /v1/models lists and responses name. */
  modelId: string;
  /** When the model was ready (ms since the epoch). */
  loadedAt: number;
}

export class ServeEngine {
  readonly host: ModelHost;
  readonly totals = new SpeculationTotals();
  private ready: Ready | undefined;
  private extraSessions: NativeSession[] = [];
  private stopping = false;

  constructor(private readonly opts: ServeEngineOptions) {
    this.host = new ModelHost({ addon: opts.addon, threads: opts.threads, nCtx: opts.nCtx });
  }

  get settings(): GenerationSettings {
    return this.opts.settings;
  }

  get parallel(): number {
    return this.opts.parallel;
  }

  async load(req: LoadRequest): Promise<Ready> {
    const engine = await this.host.load(req);
    // The host's two sessions serve as the first slots; more are opened for --parallel > 2.
    const sessions = [engine.completionSession, engine.chatSession].slice(0, this.opts.parallel);
    while (sessions.length < this.opts.parallel) {
      const s = this.host.openSession(engine);
      this.extraSessions.push(s);
      sessions.push(s);
    }
    const pool = new SessionPool(sessions, (stats) => this.totals.add(stats));
    this.ready = { engine, pool, modelId: modelId(engine), loadedAt: Date.now() };
    return this.ready;
  }

  /** The loaded engine, or a 503 saying why there is none. */
  whenServing(): Ready {
    if (this.ready) return this.ready;
    if (this.stopping) {
      throw new ApiError(503, 'the server is shutting down', null, 'shutting_down');
    }
    const s = this.host.state;
    if (s.kind === 'error') {
      throw new ApiError(503, `no model is loaded: ${s.message}`, null, 'model_not_loaded');
    }
    throw new ApiError(503, 'the model is still loading', null, 'model_loading');
  }

  get current(): Ready | undefined {
    return this.ready;
  }

  /** Cancels every request, waits for the native work to stop, frees the models. */
  async shutdown(): Promise<void> {
    const ready = this.ready;
    this.ready = undefined;
    this.stopping = true;
    if (ready) {
      ready.pool.cancelAll();
      await ready.pool.idle();
    }
    for (const s of this.extraSessions) this.host.closeSession(s);
    this.extraSessions = [];
    this.host.dispose();
  }
}

/** The model file's name without `.gguf`: what clients put in `model`. */
export function modelId(engine: LoadedEngine): string {
  return basename(engine.paths.model).replace(/\.gguf$/i, '');
}
