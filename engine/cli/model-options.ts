// Options shared by the commands that load a model: which files, how many threads.
import { existsSync } from 'node:fs';
import { loadAddon } from '../native/load-addon';
import type { NativeAddon, NativeModel } from '../native/addon';
import { resolveModelPaths } from '../models/model-paths';
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
  const { model } = resolveModelPaths({ model: stringOption(args, 'model') });
  if (!existsSync(model)) throw new CliError(`${model}: model file not found`);
  return model;
}

/**
 * The draft model, chosen by the same rule as the sidecar's (engine/models/model-paths.ts):
 * --draft when given (`self`: a Q4_0 copy of the target), else the bundled draft with the
 * bundled target.
 */
export async function draftPathFrom(
  args: ParsedArgs,
  modelPath: string,
): Promise<string | undefined> {
  const { draft } = resolveModelPaths({
    model: stringOption(args, 'model'),
    draft: stringOption(args, 'draft'),
  });
  if (draft === SELF_DRAFT) {
    try {
      return await selfDraftPath(loadAddon(), modelPath);
    } catch (e) {
      throw new CliError((e as Error).message);
    }
  }
  if (draft && !existsSync(draft)) throw new CliError(`${draft}: draft model file not found`);
  return draft ?? undefined;
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
