// In-process access to the native addon for tests that run many generations (spawning the
// CLI for each would measure Node's start-up, not the engine).
import type {
  GenerateParams,
  GenerateStats,
  NativeModel,
  NativeSession,
} from '../../engine/native/addon';
import { loadAddon } from '../../engine/native/load-addon';
import { GENERATION_DEFAULTS } from '../../engine/protocol';
import {
  buildGenerateParams,
  type GenerationOverrides,
} from '../../engine/generation/generation-config';

/**
 * Greedy plain decoding over the whole distribution (no truncation, so the sampling tests
 * compare full distributions): the reference every speculative configuration must reproduce.
 */
export const greedyParams: GenerateParams = params({
  maxTokens: 48,
  sampling: { temperature: 0, topK: 0, topP: 1, minP: 0, repeatPenalty: 1 },
  speculation: { mode: 'off' },
});

/** The table's defaults with a test's overrides, as every front end builds them. */
export function params(overrides: GenerationOverrides): GenerateParams {
  return buildGenerateParams(GENERATION_DEFAULTS, undefined, overrides);
}

/** greedyParams with other speculation settings. */
export function speculating(
  speculation: GenerationOverrides['speculation'],
  more: GenerationOverrides = {},
): GenerateParams {
  return params({
    maxTokens: greedyParams.maxTokens,
    ...more,
    sampling: { ...greedyParams.sampling, ...more.sampling },
    speculation: { ...greedyParams.speculation, ...speculation },
  });
}

export async function load(path: string): Promise<NativeModel> {
  return loadAddon().loadModel(path, { threads: 1 });
}

export function session(model: NativeModel, draft?: NativeModel, nCtx = 1024): NativeSession {
  return loadAddon().createSession(model, { nCtx, threads: 1, draft });
}

export async function generate(
  s: NativeSession,
  prompt: number[],
  params: GenerateParams,
): Promise<{ tokens: number[]; text: string; stats: GenerateStats }> {
  const tokens: number[] = [];
  let text = '';
  const handle = s.generate(prompt, params, (id, piece) => {
    if (id >= 0) tokens.push(id);
    text += piece;
  });
  const stats = await handle.done;
  return { tokens, text, stats };
}
