// Which model files to load. The bundled pair's location is engine/native/default-models.ts
// (one function, relative to the package root, which works from dist/cli.js and from tsx).
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { defaultDraftPath, defaultModelPath } from '../native/default-models';

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
  const draft = opts.draft ? resolve(opts.draft) : null;
  if (opts.model) return { model: resolve(opts.model), draft };
  if (opts.draft !== undefined) return { model: defaultModelPath(), draft };
  return { model: defaultModelPath(), draft: existsSync(defaultDraftPath()) ? defaultDraftPath() : null };
}
