// Owns the loaded models and their native sessions. One target (plus an optional draft),
// two sessions: one for completions and one for chat, so that each keeps its own KV prefix
// (a chat turn does not evict the completion prompt's cache, nor the other way round). A
// load that fails leaves the previous model serving; a load that succeeds swaps models
// only after the caller has drained the work running on the old ones.
import { basename } from 'node:path';
import type {
  BackendKind,
  ModelInfo,
  NativeAddon,
  NativeModel,
  NativeSession,
} from '../native/addon';
import { detectFimTemplate, withoutFim, type FimTemplate } from '../completion/fim-template';
import { sessionContextSize } from '../generation/generation-config';
import { GENERATION_DEFAULTS } from '../protocol';
import { fileChange, fileIdentity, watchFiles, type FileIdentity } from './file-identity';
import { loadModels, message, type LoadProgress } from './load-models';
import type { ModelPaths } from './model-paths';

export interface LoadedEngine {
  paths: ModelPaths;
  target: NativeModel;
  draft?: NativeModel;
  info: ModelInfo;
  draftInfo?: ModelInfo;
  fim: FimTemplate;
  completionSession: NativeSession;
  chatSession: NativeSession;
  nCtx: number;
  /** CPU threads the models run with, and the backend that was asked for. */
  threads: number;
  backendKind: BackendKind;
  loadMs: number;
  /** The files as they were when loaded (see fileChanged()). */
  files?: { model?: FileIdentity; draft?: FileIdentity };
  /** What the load did without (a self-draft that could not be written). */
  warnings?: string[];
}

/** What to load: the files, and optionally where and how wide (else the host's defaults). */
export interface LoadRequest extends ModelPaths {
  /** 0 or absent: the host's threads (its --threads, else the physical cores). */
  threads?: number;
  backend?: BackendKind;
}

export type HostState =
  | { kind: 'empty' }
  | { kind: 'loading'; paths: ModelPaths }
  | { kind: 'ready' }
  | { kind: 'error'; message: string };

export interface HostOptions {
  /** How the addon is found; throws with a clear message when it is missing. */
  addon: () => NativeAddon;
  /** Default CPU threads (0 or absent: the physical cores). */
  threads?: number;
  /** Context size per session (default: engine/generation/generation-config.ts's rule). */
  nCtx?: number;
  /** Called before a loaded engine is replaced, to stop and drain work on it. */
  drain?: () => Promise<void>;
  onChange?: () => void;
}

/** No model is loaded (none configured yet, or the load failed); the message says why. */
export class NoModelError extends Error {}

export class ModelHost {
  private loaded: LoadedEngine | undefined;
  private loading: Promise<LoadedEngine> | undefined;
  private _state: HostState = { kind: 'empty' };
  private _lastError: string | undefined;
  private sessions = 0;
  private chain: Promise<unknown> = Promise.resolve();
  private unwatchFiles: (() => void) | undefined;

  constructor(private readonly opts: HostOptions) {}

  get state(): HostState {
    return this._state;
  }

  /** Why the last load failed while a previous model kept serving; cleared by a success. */
  get lastError(): string | undefined {
    return this._lastError;
  }

  get current(): LoadedEngine | undefined {
    return this.loaded;
  }

  /**
   * Says when the loaded model's or draft's file was deleted, truncated or replaced on disk
   * since it was loaded (the loaded copy keeps serving; a reload would read the new file).
   */
  fileChanged(): string | undefined {
    const e = this.loaded;
    if (!e?.files) return undefined;
    const changes: string[] = [];
    for (const [role, path, loaded] of [
      ['model', e.paths.model, e.files.model],
      ['draft model', e.paths.draft, e.files.draft],
    ] as const) {
      const what = path && loaded ? fileChange(path, loaded) : undefined;
      if (what) changes.push(`the ${role} file ${path} was ${what}`);
    }
    if (!changes.length) return undefined;
    return `${changes.join('; ')} after it was loaded: the loaded copy keeps working; reload the model to use the file as it is now`;
  }

  /** Native sessions allocated now. */
  get openSessions(): number {
    return this.sessions;
  }

  /** Where the loaded model's kernels run, as the addon names it ("cpu:avx512", "cuda:…"). */
  backend(): string {
    const named = this.loaded?.info.backend;
    if (named) return named;
    try {
      return `cpu:${this.opts.addon().systemInfo().isa}`;
    } catch {
      return 'none';
    }
  }

  /** Threads for a load: the request's, else the host's default, else the physical cores. */
  threads(requested?: number): number {
    if (requested && requested > 0) return requested;
    if (this.opts.threads && this.opts.threads > 0) return this.opts.threads;
    try {
      return Math.max(1, this.opts.addon().systemInfo().physicalCores);
    } catch {
      return 1;
    }
  }

  /** The loaded engine; waits for a load in progress; throws the reason when there is none. */
  async whenReady(): Promise<LoadedEngine> {
    if (this.loading) {
      try {
        return await this.loading;
      } catch {
        // fall through: a failed load may have left the previous model serving
      }
    }
    if (this.loaded) return this.loaded;
    const s = this._state;
    throw new NoModelError(s.kind === 'error' ? `no model loaded: ${s.message}` : 'no model is loaded');
  }

  /** Loads models (one load at a time) and switches to them. */
  load(req: LoadRequest, progress?: LoadProgress): Promise<LoadedEngine> {
    // Say 'loading' at once: a status request right after this call must not see 'empty'.
    if (!this.loaded) this.setState({ kind: 'loading', paths: req });
    const run = this.chain.then(() => this.loadNow(req, progress));
    this.chain = run.catch(() => undefined);
    this.loading = run;
    run.then(
      () => this.loading === run && (this.loading = undefined),
      () => this.loading === run && (this.loading = undefined),
    );
    return run;
  }

  private async loadNow(req: LoadRequest, progress?: LoadProgress): Promise<LoadedEngine> {
    this.setState({ kind: 'loading', paths: req });
    const started = Date.now();
    const created: NativeSession[] = [];
    let models: Awaited<ReturnType<typeof loadModels>> | undefined;
    try {
      const addon = this.opts.addon();
      const threads = this.threads(req.threads);
      const backendKind = req.backend ?? GENERATION_DEFAULTS.backend;
      const requested: ModelPaths = { model: req.model, draft: req.draft };
      // Before the load, so a change while it runs counts as a change too.
      const modelFile = fileIdentity(req.model);
      models = await loadModels(addon, requested, { threads, backend: backendKind }, progress);
      const { paths, target, draft } = models;
      progress?.('creating sessions', 90);
      const info = target.info();
      const nCtx = sessionContextSize(info.nCtxTrain, this.opts.nCtx);
      for (let i = 0; i < 2; i++) {
        created.push(addon.createSession(target, { nCtx, threads, draft }));
        this.sessions++;
      }
      const fim = detectFimTemplate(info, (id) => target.detokenize([id], true));
      const engine: LoadedEngine = {
        paths,
        target,
        draft,
        info,
        draftInfo: draft?.info(),
        // The model's metadata says whether it learned its FIM tokens (leapfrog.prompt.fim).
        fim: info.fimTrained === false ? withoutFim(fim) : fim,
        completionSession: created[0],
        chatSession: created[1],
        nCtx,
        threads,
        backendKind,
        loadMs: Date.now() - started,
        files: { model: modelFile, draft: paths.draft ? fileIdentity(paths.draft) : undefined },
        warnings: models.warnings,
      };
      await this.swap(engine);
      this._lastError = undefined;
      this.setState({ kind: 'ready' });
      return engine;
    } catch (err) {
      for (const s of created) this.freeSession(s);
      models?.draft?.free();
      models?.target.free();
      // The previous model (if any) keeps serving; the error is reported either way.
      if (this.loaded) this._lastError = message(err);
      this.setState(this.loaded ? { kind: 'ready' } : { kind: 'error', message: message(err) });
      throw err instanceof Error ? err : new Error(message(err));
    }
  }

  private async swap(next: LoadedEngine): Promise<void> {
    const old = this.loaded;
    if (old) {
      await this.opts.drain?.();
      this.release(old);
    }
    this.loaded = next;
    // A file changed under the loaded model shows in the status (fileChanged()) unasked.
    this.unwatchFiles?.();
    const files = [next.paths.model, next.paths.draft].filter((p): p is string => !!p);
    this.unwatchFiles = watchFiles(files, () => this.opts.onChange?.());
  }

  private release(e: LoadedEngine): void {
    this.freeSession(e.completionSession);
    this.freeSession(e.chatSession);
    e.draft?.free();
    e.target.free();
  }

  private freeSession(s: NativeSession): void {
    s.free();
    this.sessions--;
  }

  /**
   * One more native session on a loaded engine (its context, threads and draft), for a front
   * end that runs several generations at once (`leapfrog serve --parallel N`). The caller
   * closes it with closeSession before that engine is replaced or disposed.
   */
  openSession(engine: LoadedEngine): NativeSession {
    const session = this.opts.addon().createSession(engine.target, {
      nCtx: engine.nCtx,
      threads: engine.threads,
      draft: engine.draft,
    });
    this.sessions++;
    return session;
  }

  closeSession(session: NativeSession): void {
    this.freeSession(session);
  }

  /** Frees everything (shutdown). The caller drains work first. */
  dispose(): void {
    if (this.loaded) this.release(this.loaded);
    this.loaded = undefined;
    this.unwatchFiles?.();
    this.unwatchFiles = undefined;
    this.setState({ kind: 'empty' });
  }

  private setState(s: HostState): void {
    this._state = s;
    this.opts.onChange?.();
  }
}

export function modelName(info: ModelInfo | undefined): string | null {
  if (!info) return null;
  return info.name || basename(info.path);
}
