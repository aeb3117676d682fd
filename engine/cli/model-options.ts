// Options shared by the commands that load a model and generate: which files, where and how
// wide (--threads, --backend), and how to speculate (--spec, --budget, --tree, --draft).
// `generate` and `complete` parse them here, so that both hold the sidecar's path to each
// setting; their values become the settings layer of engine/generation/generation-config.ts.
import { loadAddon } from '../native/load-addon';
import type { NativeAddon } from '../native/addon';
import { resolveModelPaths, type ModelPaths } from '../models/model-paths';
import { loadModels, type LoadedModels, type LoadOptions } from '../models/load-models';
import {
  BACKENDS,
  GENERATION_DEFAULTS,
  MAX_DRAFT_BUDGET,
  SPECULATION_MODES,
  type BackendKind,
  type SpeculationConfig,
} from '../protocol';
import type { GenerationSettings } from '../generation/generation-config';
import { CliError, ParsedArgs, UsageError, choiceOption, intOption, stringOption } from './args';
import type { OptionSpec } from './args';

export const modelOptionSpec: Record<string, OptionSpec> = {
  model: { kind: 'string' },
  threads: { kind: 'string' },
  backend: { kind: 'string' },
};

/** The flags of `generate` and `complete` that choose the models and the speculation. */
export const generationOptionSpec: Record<string, OptionSpec> = {
  ...modelOptionSpec,
  draft: { kind: 'string' },
  spec: { kind: 'string' },
  budget: { kind: 'string' },
  tree: { kind: 'flag' },
  // For benchmarks: always draft --budget tokens (no budget controller).
  'fixed-budget': { kind: 'flag', hidden: true },
};

export function modelPathFrom(args: ParsedArgs): string {
  return resolveModelPaths({ model: stringOption(args, 'model') }).model;
}

/**
 * The model files, chosen by the same rule as the sidecar's (engine/models/model-paths.ts):
 * --draft when given (`self`: a Q4_0 copy of the target), else the bundled draft with the
 * bundled target; no draft when the speculation mode never uses one.
 */
export function modelPathsFrom(args: ParsedArgs, speculation: SpeculationConfig): ModelPaths {
  const paths = resolveModelPaths({
    model: stringOption(args, 'model'),
    draft: stringOption(args, 'draft'),
  });
  const usesDraft = speculation.mode === 'auto' || speculation.mode === 'draft';
  if (speculation.mode === 'draft' && !paths.draft) {
    throw new UsageError('--spec draft needs --draft (a smaller model with the same vocabulary)');
  }
  return usesDraft ? paths : { ...paths, draft: null };
}

/** --spec, --budget, --tree and --fixed-budget over the table's defaults. */
export function settingsFrom(args: ParsedArgs): GenerationSettings {
  const d = GENERATION_DEFAULTS.speculation;
  const budget = intOption(args, 'budget', d.budget, 0);
  if (budget > MAX_DRAFT_BUDGET) {
    throw new UsageError(`--budget must be at most ${MAX_DRAFT_BUDGET}`);
  }
  return {
    speculation: {
      mode: choiceOption(args, 'spec', SPECULATION_MODES, d.mode),
      budget,
      adaptive: args['fixed-budget'] === true ? false : d.adaptive,
      tree: args.tree === true ? true : d.tree,
    },
  };
}

/** --threads; 0 (the table's default) means the physical cores. */
export function threadsFrom(args: ParsedArgs, addon: NativeAddon = loadAddon()): number {
  const threads = intOption(args, 'threads', GENERATION_DEFAULTS.threads, 0);
  return threads > 0 ? threads : Math.max(1, addon.systemInfo().physicalCores);
}

/** --backend; whether it is available is the native loader's to say. */
export function backendFrom(args: ParsedArgs): BackendKind {
  return choiceOption(args, 'backend', BACKENDS, GENERATION_DEFAULTS.backend);
}

/** Loads through the shared loader; its one-line reasons become the CLI's error. */
export async function loadForCli(
  addon: NativeAddon,
  paths: ModelPaths,
  options: LoadOptions,
): Promise<LoadedModels> {
  let models: LoadedModels;
  try {
    models = await loadModels(addon, paths, options);
  } catch (e) {
    throw new CliError((e as Error).message);
  }
  for (const w of models.warnings) process.stderr.write(`leapfrog: warning: ${w}\n`);
  return models;
}
