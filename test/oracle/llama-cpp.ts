// llama.cpp as the oracle, through node-llama-cpp (prebuilt CPU binaries, offline).
//
// One Llama instance per process (creating it takes a while), one loaded model + one
// context (a single sequence) per model path, cached. Every call clears the sequence first,
// so results never depend on what ran before.
//
// API used (node-llama-cpp 3.22): LlamaContextSequence.controlledEvaluate(), whose
// per-token `generateNext.logits` option returns the raw last-layer logits of that position
// (all of them with `logits: true`, or a filtered subset such as `{filter: {includeTop: 2}}`).
// greedy() asks for `generateNext: {token: true}` with node-llama-cpp's default sampler
// config (temperature 0), whose chain is llama.cpp's greedy sampler alone (argmax of the raw
// logits, first index on ties); no penalties, no bias. greedyDetailed() instead takes the
// argmax of the top-2 raw logits itself and reports the margin (slower: the addon sorts the
// whole vocabulary for `includeTop`).
//
// Context settings, which matter for the comparison: CPU only, F16 K/V cache (llama.cpp's
// default), flash attention off, context = the model's context length, batch 64, threads =
// LEAPFROG_ORACLE_THREADS or 1. (On the 2-core development VM, 2 llama.cpp threads are
// ~50x slower than 1 for these tiny models: the threads spin-wait against Node's own.)
import type {
  ControlledEvaluateInputItem,
  Llama,
  LlamaContext,
  LlamaContextSequence,
  LlamaModel,
  Token,
} from 'node-llama-cpp';

type NLC = typeof import('node-llama-cpp');

let nlcPromise: Promise<NLC> | null = null;
let llamaPromise: Promise<Llama> | null = null;

// A real dynamic import (node-llama-cpp is ESM-only; this file may be compiled as CommonJS).
const importESM = new Function('s', 'return import(s)') as (s: string) => Promise<NLC>;

function nlc(): Promise<NLC> {
  nlcPromise ??= importESM('node-llama-cpp');
  return nlcPromise;
}

export function getOracleLlama(): Promise<Llama> {
  llamaPromise ??= nlc().then((m) =>
    m.getLlama({
      gpu: false,
      build: 'never',
      logLevel: m.LlamaLogLevel.error,
      progressLogs: false,
    }),
  );
  return llamaPromise;
}

export function oracleThreads(): number {
  const env = Number(process.env.LEAPFROG_ORACLE_THREADS);
  return env > 0 ? env : 1;
}

interface Loaded {
  model: LlamaModel;
  context: LlamaContext | null;
  sequence: LlamaContextSequence | null;
  lock: Promise<unknown>;
}
const loaded = new Map<string, Promise<Loaded>>();

async function load(modelPath: string): Promise<Loaded> {
  let p = loaded.get(modelPath);
  if (!p) {
    p = (async () => {
      const llama = await getOracleLlama();
      const model = await llama.loadModel({ modelPath, gpuLayers: 0, useMmap: true });
      return { model, context: null, sequence: null, lock: Promise.resolve() };
    })();
    loaded.set(modelPath, p);
    p.catch(() => loaded.delete(modelPath));
  }
  return p;
}

async function sequenceOf(l: Loaded): Promise<LlamaContextSequence> {
  if (!l.sequence) {
    const n = l.model.trainContextSize;
    l.context = await l.model.createContext({
      contextSize: n,
      batchSize: Math.min(n, 64), // the logits buffer is batch x vocabulary floats
      sequences: 1,
      flashAttention: false,
      threads: oracleThreads(),
    });
    l.sequence = l.context.getSequence();
  }
  await l.sequence.clearHistory();
  return l.sequence;
}

/** Runs `fn` with exclusive use of the model's sequence. */
async function withModel<T>(
  modelPath: string,
  fn: (l: Loaded, seq: LlamaContextSequence) => Promise<T>,
): Promise<T> {
  const l = await load(modelPath);
  const run = l.lock.then(async () => fn(l, await sequenceOf(l)));
  l.lock = run.catch(() => undefined);
  return run;
}

export interface GreedyStep {
  token: number;
  /** top-1 minus top-2 raw logit at this step */
  margin: number;
  top2: number;
}

function argmaxTop2(logits: Map<number, number>): GreedyStep {
  let best = -1;
  let bestV = -Infinity;
  let second = -1;
  let secondV = -Infinity;
  for (const [tok, v] of logits) {
    if (v > bestV || (v === bestV && tok < best)) {
      second = best;
      secondV = bestV;
      best = tok;
      bestV = v;
    } else if (v > secondV || (v === secondV && tok < second)) {
      second = tok;
      secondV = v;
    }
  }
  return { token: best, margin: bestV - secondV, top2: second };
}

type NextOptions = Exclude<ControlledEvaluateInputItem, Token>[1]['generateNext'];
const TOP: NextOptions = { logits: { filter: { tokens: [], includeTop: 2 } } };
const tok = (t: number): Token => t as Token;

/** The prompt as controlledEvaluate input, asking for `next` at the last position. */
function asInput(ids: readonly number[], next: NextOptions): ControlledEvaluateInputItem[] {
  return ids.map((t, i) => (i === ids.length - 1 ? [tok(t), { generateNext: next }] : tok(t)));
}

/** Greedy continuation with the top-1/top-2 margin of every step. */
export async function greedyDetailed(
  modelPath: string,
  promptTokenIds: readonly number[],
  nSteps: number,
): Promise<GreedyStep[]> {
  if (promptTokenIds.length === 0) throw new Error('greedy: empty prompt');
  return withModel(modelPath, async (_l, seq) => {
    const steps: GreedyStep[] = [];
    let out = await seq.controlledEvaluate(asInput(promptTokenIds, TOP));
    for (let s = 0; s < nSteps; s++) {
      const logits = out[out.length - 1]?.next.logits;
      if (!logits) throw new Error('llama.cpp returned no logits');
      const step = argmaxTop2(logits);
      steps.push(step);
      if (s + 1 < nSteps)
        out = await seq.controlledEvaluate([[tok(step.token), { generateNext: TOP }]]);
    }
    return steps;
  });
}

/** llama.cpp's greedy continuation (argmax of the raw logits) of `promptTokenIds`. */
export async function greedy(
  modelPath: string,
  promptTokenIds: readonly number[],
  nSteps: number,
): Promise<number[]> {
  if (promptTokenIds.length === 0) throw new Error('greedy: empty prompt');
  const NEXT: NextOptions = { token: true };
  return withModel(modelPath, async (_l, seq) => {
    const tokens: number[] = [];
    let out = await seq.controlledEvaluate(asInput(promptTokenIds, NEXT));
    for (let s = 0; s < nSteps; s++) {
      const t = out[out.length - 1]?.next.token;
      if (t == null) throw new Error('llama.cpp returned no token');
      tokens.push(t);
      if (s + 1 < nSteps) out = await seq.controlledEvaluate([[t, { generateNext: NEXT }]]);
    }
    return tokens;
  });
}

/** Raw logits of the last prompt position (length = vocabulary size). */
export async function lastLogits(
  modelPath: string,
  promptTokenIds: readonly number[],
): Promise<Float32Array> {
  if (promptTokenIds.length === 0) throw new Error('lastLogits: empty prompt');
  return withModel(modelPath, async (_l, seq) => {
    const out = await seq.controlledEvaluate(asInput(promptTokenIds, { logits: true }));
    const logits = out[out.length - 1]?.next.logits;
    if (!logits) throw new Error('llama.cpp returned no logits');
    let n = 0;
    for (const tok of logits.keys()) n = Math.max(n, tok + 1);
    const res = new Float32Array(n).fill(NaN);
    for (const [tok, v] of logits) res[tok] = v;
    return res;
  });
}

/** llama.cpp's tokenization of `text`: no special tokens added, special-token text not parsed. */
export async function tokenize(modelPath: string, text: string): Promise<number[]> {
  const l = await load(modelPath);
  return [...l.model.tokenize(text, false)];
}

/** `text` as a prompt: BOS first when the model's metadata asks for it, then tokenize(text). */
export async function promptTokens(modelPath: string, text: string): Promise<number[]> {
  const l = await load(modelPath);
  const ids = [...l.model.tokenize(text, false)];
  const bos = l.model.tokens.bos;
  if (l.model.tokens.shouldPrependBosToken && bos != null) ids.unshift(bos);
  return ids;
}

export async function detokenize(modelPath: string, ids: readonly number[]): Promise<string> {
  const l = await load(modelPath);
  return l.model.detokenize(ids.map(tok), false);
}

/** Frees every loaded model and context (the Llama instance stays for the process). */
export async function disposeOracle(): Promise<void> {
  const all = [...loaded.values()];
  loaded.clear();
  for (const p of all) {
    try {
      const l = await p;
      await l.context?.dispose();
      await l.model.dispose();
    } catch {
      /* already gone */
    }
  }
}
