// Loads a target (and optional draft) model with every check the user's mistakes need: the
// file exists and is a GGUF (check-gguf.ts), `self` becomes the written Q4_0 copy, the
// native loader's failure names the file, the draft shares the target's vocabulary. The
// language server's ModelHost and `leapfrog generate` both load through here.
import { basename } from 'node:path';
import type { BackendKind, NativeAddon, NativeModel } from '../native/addon';
import { SELF_DRAFT, SelfDraftError, selfDraftPath } from '../native/self-draft';
import { checkGgufFile } from './check-gguf';
import type { ModelPaths } from './model-paths';

export interface LoadOptions {
  /** CPU threads (≥ 1: the caller has resolved 0 = physical cores). */
  threads: number;
  backend: BackendKind;
  /** Just the tokenizer (no weights): enough for `leapfrog tokenize`. */
  vocabOnly?: boolean;
}

export interface LoadedModels {
  /** With `self` replaced by the copy's path. */
  paths: ModelPaths;
  target: NativeModel;
  draft?: NativeModel;
  /** What the load did without (a self-draft that could not be written), for the user. */
  warnings: string[];
}

export type LoadProgress = (message: string, percent: number) => void;

export async function loadModels(
  addon: NativeAddon,
  requested: ModelPaths,
  options: LoadOptions,
  progress?: LoadProgress,
): Promise<LoadedModels> {
  let paths = requested;
  let target: NativeModel | undefined;
  const warnings: string[] = [];
  try {
    checkGgufFile(paths.model, 'model');
    if (paths.draft === SELF_DRAFT) {
      progress?.('writing the self-draft (a Q4_0 copy of the model)', 5);
      try {
        paths = { ...paths, draft: await selfDraftPath(addon, paths.model) };
      } catch (e) {
        // The target alone still serves: no draft, and the user is told why.
        if (!(e instanceof SelfDraftError)) throw e;
        warnings.push(e.message);
        paths = { ...paths, draft: null };
      }
    }
    if (paths.draft) checkGgufFile(paths.draft, 'draft model');
    const native = { ...options };
    progress?.(`loading ${basename(paths.model)}`, 10);
    const modelPath = paths.model;
    target = await addon.loadModel(modelPath, native).catch((e: unknown) => {
      throw new Error(naming(modelPath, 'model', e));
    });
    if (!paths.draft) return { paths, target, warnings };
    progress?.(`loading draft ${basename(paths.draft)}`, 50);
    const draftPath = paths.draft;
    const draft = await addon.loadModel(draftPath, native).catch((e: unknown) => {
      throw new Error(naming(draftPath, 'draft model', e));
    });
    if (draft.info().nVocab !== target.info().nVocab) {
      const sizes = `${draft.info().nVocab} vs ${target.info().nVocab} tokens`;
      draft.free();
      throw new Error(`draft model ${draftPath} does not share the target's vocabulary (${sizes})`);
    }
    return { paths, target, draft, warnings };
  } catch (err) {
    target?.free();
    throw err instanceof Error ? err : new Error(message(err));
  }
}

/** The native loader's message names the file already; other failures get it added. */
function naming(path: string, role: string, e: unknown): string {
  const m = message(e);
  return m.includes(path) ? m : `cannot load ${role} ${path}: ${m}`;
}

export function message(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}
