// Options shared by the commands that load a model: which files, how many threads.
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { loadAddon } from '../native/load-addon';
import type { NativeAddon, NativeModel } from '../native/addon';
import { defaultDraftPath, defaultModelPath } from '../native/default-models';
import { SELF_DRAFT, selfDraftPath } from '../native/self-draft';
import {
  CliError,
  ParsedArgs,
  choiceOption,
  intOption,
  stringOption,
  type OptionSpec,
} from './args';

export const modelOptionSpec: Record<string, OptionSpec> = {
  model: { kind: 'string' },
  threads: { kind: 'string' },
  backend: { kind: 'string' },
};

export function modelPathFrom(args: ParsedArgs): string {
  const path = resolve(stringOption(args, 'model') ?? defaultModelPath());
  if (!existsSync(path)) throw new CliError(`${path}: model file not found`);
  return path;
}

/**
 * The draft model: --draft when given (`self`: a Q4_0 copy of the target); else the bundled
 * draft when the target is the bundled model.
 */
export async function draftPathFrom(
  args: ParsedArgs,
  modelPath: string,
): Promise<string | undefined> {
  const explicit = stringOption(args, 'draft');
  if (explicit === SELF_DRAFT) {
    try {
      return await selfDraftPath(loadAddon(), modelPath);
    } catch (e) {
      throw new CliError((e as Error).message);
    }
  }
  if (explicit) {
    const path = resolve(explicit);
    if (!existsSync(path)) throw new CliError(`${path}: draft model file not found`);
    return path;
  }
  if (modelPath === resolve(defaultModelPath()) && existsSync(defaultDraftPath())) {
    return defaultDraftPath();
  }
  return undefined;
}

export function threadsFrom(args: ParsedArgs, addon: NativeAddon): number {
  return intOption(args, 'threads', addon.systemInfo().physicalCores, 1);
}

/** Only the CPU backend exists today; asking for another is a clear error, not a fallback. */
export function checkBackend(args: ParsedArgs): void {
  const backend = choiceOption(args, 'backend', ['auto', 'cpu', 'cuda', 'metal'] as const, 'auto');
  if (backend === 'cuda' || backend === 'metal') {
    throw new CliError(`backend '${backend}' is not available in this build (use cpu or auto)`);
  }
}

export async function loadModel(
  path: string,
  threads: number,
  vocabOnly = false,
): Promise<NativeModel> {
  try {
    return await loadAddon().loadModel(path, { threads, vocabOnly });
  } catch (e) {
    throw new CliError((e as Error).message);
  }
}
