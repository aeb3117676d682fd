// Owns the loaded models and their native sessions. One target (plus an optional draft),
// two sessions: one for completions and one for chat, so that each keeps its own KV prefix
// (a chat turn does not evict the completion prompt's cache, nor the other way round). A
// load that fails leaves the previous model serving; a load that succeeds swaps models
// only after the caller has drained the work running on the old ones.
import { basename, resolve } from 'node:path';
import type { ModelInfo, NativeAddon, NativeModel, NativeSession } from '../native/addon';
import { detectFimTemplate, withoutFim, type FimTemplate } from '../completion/fim-template';
import { defaultModelPath } from '../native/default-models';
import { SELF_DRAFT, selfDraftPath } from '../native/self-draft';
import { checkGgufFile } from './check-gguf';
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
  loadMs: number;
}

export type HostState =
  | { kind: 'empty' }
  | { kind: 'loading'; paths: ModelPaths }
  | { kind: 'ready' }
  | { kind: 'error'; message: string };

export interface HostOptions {
  /** How the addon is found; throws with a clear message when it is missing. */
  addon: () => NativeAddon;
  threads?: number;
  /** Context size per session (capped by the model's training context). */
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
  private sessions = 0;
  private chain: Promise<unknown> = Promise.resolve();

  constructor(private readonly opts: HostOptions) {}

  get state(): HostState {
    return this._state;
  }

  get current(): LoadedEngine | undefined {
    return this.loaded;
  }

  /** Native sessions allocated now. */
  get openSessions(): number {
    return this.sessions;
  }

  backend(): string {
    try {
      return `cpu:${this.opts.addon().systemInfo().isa}`;
    } catch {
      return 'none';
    }
  }

  threads(): number {
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
  load(paths: ModelPaths, progress?: (message: string, percent: number) => void): Promise<LoadedEngine> {
    // Say 'loading' at once: a status request right after this call must not see 'empty'.
    if (!this.loaded) this.setState({ kind: 'loading', paths });
    const run = this.chain.then(() => this.loadNow(paths, progress));
    this.chain = run.catch(() => undefined);
    this.loading = run;
    run.then(
      () => this.loading === run && (this.loading = undefined),
      () => this.loading === run && (this.loading = undefined),
    );
    return run;
  }

  private async loadNow(
    paths: ModelPaths,
    progress?: (message: string, percent: number) => void,
  ): Promise<LoadedEngine> {
    this.setState({ kind: 'loading', paths });
    const started = Date.now();
    let target: NativeModel | undefined;
    let draft: NativeModel | undefined;
    const created: NativeSession[] = [];
    try {
      checkGgufFile(paths.model, 'model');
      const addon = this.opts.addon();
      if (paths.draft === SELF_DRAFT) {
        progress?.('writing the self-draft (a Q4_0 copy of the model)', 5);
        paths = { ...paths, draft: await selfDraftPath(addon, paths.model) };
      }
      if (paths.draft) checkGgufFile(paths.draft, 'draft model');
      const threads = this.threads();
      progress?.(`loading ${basename(paths.model)}`, 10);
      target = await addon.loadModel(paths.model, { threads }).catch((e: unknown) => {
        throw new Error(`cannot load model ${paths.model}: ${message(e)}`);
      });
      if (paths.draft) {
        progress?.(`loading draft ${basename(paths.draft)}`, 50);
        draft = await addon.loadModel(paths.draft, { threads }).catch((e: unknown) => {
          throw new Error(`cannot load draft model ${paths.draft}: ${message(e)}`);
        });
        if (draft.info().nVocab !== target.info().nVocab) {
          throw new Error(
            `draft model ${paths.draft} does not share the target's vocabulary ` +
              `(${draft.info().nVocab} vs ${target.info().nVocab} tokens)`,
          );
        }
      }
      progress?.('creating sessions', 90);
      const info = target.info();
      const nCtx = Math.min(this.opts.nCtx ?? 4096, info.nCtxTrain > 0 ? info.nCtxTrain : 4096);
      for (let i = 0; i < 2; i++) {
        created.push(addon.createSession(target, { nCtx, threads, draft }));
        this.sessions++;
      }
      const model = target;
      const engine: LoadedEngine = {
        paths,
        target: model,
        draft,
        info,
        draftInfo: draft?.info(),
        fim: bundledTarget(paths.model)
          ? withoutFim(detectFimTemplate(info, (id) => model.detokenize([id], true)))
          : detectFimTemplate(info, (id) => model.detokenize([id], true)),
        completionSession: created[0],
        chatSession: created[1],
        nCtx,
        loadMs: Date.now() - started,
      };
      await this.swap(engine);
      this.setState({ kind: 'ready' });
      return engine;
    } catch (err) {
      for (const s of created) this.freeSession(s);
      draft?.free();
      target?.free();
      // The previous model (if any) keeps serving; the error is reported either way.
      this.setState(
        this.loaded ? { kind: 'ready' } : { kind: 'error', message: message(err) },
      );
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

  /** Frees everything (shutdown). The caller drains work first. */
  dispose(): void {
    if (this.loaded) this.release(this.loaded);
    this.loaded = undefined;
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

function message(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}

/** The bundled target prompts prefix-only (see withoutFim and models/MODEL_CARD.md). */
function bundledTarget(path: string): boolean {
  return resolve(path) === resolve(defaultModelPath());
}
