// Which model files to load. The bundled pair's location is engine/native/default-models.ts
// (one function, relative to the package root, which works from dist/cli.js and from tsx).
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { defaultDraftPath, defaultModelPath } from '../native/default-models';
import { SELF_DRAFT } from '../native/self-draft';

export interface ModelPaths {
  model: string;
  draft: string | null;
}

/**
 * The paths to load: the given model (and draft, if given), else the bundled pair. The
 * bundled draft goes only with the bundled target, and only when it is there: a draft must
 * share the target's vocabulary.
 */
export function resolveModelPaths(opts: { model?: string; draft?: string | null }): ModelPaths {
  // "self" asks for a lower-bit copy of the target (engine/native/self-draft.ts).
  const draft = opts.draft === SELF_DRAFT ? SELF_DRAFT : opts.draft ? resolve(opts.draft) : null;
  if (opts.model) return { model: resolve(opts.model), draft };
  if (opts.draft !== undefined) return { model: defaultModelPath(), draft };
  return { model: defaultModelPath(), draft: existsSync(defaultDraftPath()) ? defaultDraftPath() : null };
}
