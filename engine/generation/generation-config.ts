// Where a request's generation configuration is built — the one place. Every front end
// (inline completion, chat and explain, `leapfrog generate`, `leapfrog complete`, the
// benchmarks) calls buildGenerateParams with three layers, later ones winning:
//   1. the table of defaults (GENERATION_DEFAULTS in engine/protocol.ts),
//   2. the user's settings (`leapfrog.speculation.*`, or the CLI's --spec/--budget/… flags),
//   3. the front end's own overrides for this request (its preset, its maxTokens).
// The drafting policy itself (which drafters a mode means) is decided natively, in spec/.
import {
  GENERATION_DEFAULTS,
  MAX_DRAFT_BUDGET,
  MIN_DRAFT_BUDGET,
  SPECULATION_MODES,
  type GenerationConfig,
  type SamplingConfig,
  type SpeculationConfig,
  type SpeculationMode,
} from '../protocol';
import type { GenerateParams } from '../native/addon';

/** What the user's settings decide for every request (live: read at each request). */
export interface GenerationSettings {
  speculation: SpeculationConfig;
}

/** A front end's overrides for one request. */
export interface GenerationOverrides {
  maxTokens?: number;
  stopAtEog?: boolean;
  sampling?: Partial<SamplingConfig>;
  speculation?: Partial<SpeculationConfig>;
  /** Token ids the lookup drafter may copy from (chunks separated by -1). */
  corpus?: number[];
}

/**
 * Inline completion decodes greedily with the table's settings: completions must be
 * reproducible, and greedy speculation accepts by exact match (every ghost text is what
 * the model alone would write). Spelled out so that a change of the table's temperature
 * cannot make ghost text random.
 */
export const COMPLETION_OVERRIDES: GenerationOverrides = { sampling: { temperature: 0 } };

/** Chat and explain sample: a little temperature and a repeat penalty read better. */
export const CHAT_OVERRIDES: GenerationOverrides = {
  maxTokens: 512,
  sampling: { temperature: 0.2, repeatPenalty: 1.1, seed: 42 },
};

export function buildGenerateParams(
  defaults: GenerationConfig,
  settings: GenerationSettings | undefined,
  overrides: GenerationOverrides = {},
): GenerateParams {
  const speculation: SpeculationConfig = {
    ...defaults.speculation,
    ...settings?.speculation,
    ...overrides.speculation,
  };
  speculation.budget = clampBudget(speculation.budget);
  const params: GenerateParams = {
    maxTokens: overrides.maxTokens ?? defaults.maxTokens,
    stopAtEog: overrides.stopAtEog ?? defaults.stopAtEog,
    sampling: { ...defaults.sampling, ...overrides.sampling },
    speculation,
  };
  if (overrides.corpus && overrides.corpus.length > 0) params.corpus = overrides.corpus;
  return params;
}

/** Merges two override layers (a front end's preset, then the request's own). */
export function mergeOverrides(
  base: GenerationOverrides,
  top: GenerationOverrides,
): GenerationOverrides {
  return {
    ...base,
    ...top,
    sampling: { ...base.sampling, ...top.sampling },
    speculation: { ...base.speculation, ...top.speculation },
  };
}

/** The parameters the native addon's defaultGenerateParams() must equal. */
export function defaultGenerateParams(): GenerateParams {
  return buildGenerateParams(GENERATION_DEFAULTS, undefined);
}

/** The settings a server or CLI starts from. */
export function defaultGenerationSettings(): GenerationSettings {
  return { speculation: { ...GENERATION_DEFAULTS.speculation } };
}

/** A draft budget within what one verification pass can take. */
export function clampBudget(budget: number): number {
  if (!Number.isFinite(budget)) return GENERATION_DEFAULTS.speculation.budget;
  return Math.min(MAX_DRAFT_BUDGET, Math.max(MIN_DRAFT_BUDGET, Math.round(budget)));
}

export function isSpeculationMode(v: unknown): v is SpeculationMode {
  return typeof v === 'string' && (SPECULATION_MODES as readonly string[]).includes(v);
}

/**
 * The context-size rule: what was asked for, else the table's context size capped by the
 * model's training context (a model is not trained to attend further than that).
 */
export function sessionContextSize(nCtxTrain: number, requested?: number): number {
  if (requested !== undefined && requested > 0) return requested;
  const fallback = GENERATION_DEFAULTS.contextSize;
  return Math.min(fallback, nCtxTrain > 0 ? nCtxTrain : fallback);
}
