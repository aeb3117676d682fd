// Where the bundled models live: models/ at the repository (or extension) root. The bundle
// runs from dist/, sources from engine/<dir>/; both are two levels below the root at most.
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';

export const DEFAULT_MODEL_FILE = 'leapfrog-coder.gguf';
export const DEFAULT_DRAFT_FILE = 'leapfrog-coder-draft.gguf';

export function packageRoot(): string {
  for (const up of ['..', join('..', '..')]) {
    const dir = resolve(__dirname, up);
    if (existsSync(join(dir, 'package.json'))) return dir;
  }
  return resolve(__dirname, '..');
}

export function defaultModelPath(): string {
  return join(packageRoot(), 'models', DEFAULT_MODEL_FILE);
}

export function defaultDraftPath(): string {
  return join(packageRoot(), 'models', DEFAULT_DRAFT_FILE);
}
