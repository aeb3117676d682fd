// In-process access to the native addon for tests that run many generations (spawning the
// CLI for each would measure Node's start-up, not the engine).
import type {
  GenerateParams,
  GenerateStats,
  NativeModel,
  NativeSession,
} from '../../engine/native/addon';
import { loadAddon } from '../../engine/native/load-addon';

export const greedyParams: GenerateParams = {
  maxTokens: 48,
  temperature: 0,
  topK: 0,
  topP: 1,
  minP: 0,
  repeatPenalty: 1,
  repeatLastN: 64,
  seed: 0,
  stopAtEog: true,
  spec: 'off',
  budget: 0,
};

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
