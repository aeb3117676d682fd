// The two engines the CPU benchmark alternates, behind one interface:
//  - Leapfrog: native/build/lf_bench --serve (a child process answering one JSON line per
//    command: pp N, tg N, ctx N, pass n);
//  - llama.cpp: node-llama-cpp 3.22 in this process (prebuilt CPU binaries, offline), doing
//    the same work through its public API.
// Every method returns milliseconds of wall-clock time for the work described in
// native/tools/lf_bench.cpp. The token ids are the same pseudo-random sequence on both sides.
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface, type Interface } from 'node:readline';
import type { Llama, LlamaContext, LlamaContextSequence, LlamaModel, Token } from 'node-llama-cpp';
import { repoRoot } from '../support/paths';

export interface Engine {
  readonly name: string;
  pp(n: number): Promise<number>;
  tg(n: number): Promise<number>;
  ctx(n: number): Promise<number>;
  pass(n: number): Promise<number>;
  dispose(): Promise<void>;
}

export interface ModelInfo {
  path: string;
  arch: string;
  n_vocab: number;
  n_embd: number;
  n_layer: number;
  n_head: number;
  head_dim: number;
  head_dim_v: number;
  weight_bytes: number;
  matmul_params: number;
  backend: string;
  threads: number;
}

export const toolPath = (name: string): string => join(repoRoot, 'native', 'build', name);

/** Same sequence as bench_tokens() in lf_bench.cpp. */
export function benchTokens(n: number, nVocab: number, seed: number): number[] {
  const ids: number[] = [];
  let x = seed >>> 0;
  const range = Math.min(nVocab, 30000);
  for (let i = 0; i < n; i++) {
    x = (Math.imul(x, 1664525) + 1013904223) >>> 0;
    ids.push((x >>> 8) % range);
  }
  return ids;
}

export class LeapfrogEngine implements Engine {
  readonly name = 'leapfrog';
  private proc: ChildProcessWithoutNullStreams;
  private lines: Interface;
  private queue: ((line: string) => void)[] = [];
  private stderr = '';
  info!: ModelInfo;

  private constructor(modelPath: string, threads: number, maxBatch?: number) {
    const bin = toolPath('lf_bench');
    if (!existsSync(bin))
      throw new Error(`${bin} not built (cmake --build native/build --target lf_bench)`);
    const args = [modelPath, '--serve', '--threads', String(threads)];
    if (maxBatch) args.push('--max-batch', String(maxBatch));
    this.proc = spawn(bin, args, { stdio: ['pipe', 'pipe', 'pipe'] });
    this.proc.stderr.on('data', (d: Buffer) => (this.stderr += d.toString()));
    this.lines = createInterface({ input: this.proc.stdout });
    this.lines.on('line', (l) => this.queue.shift()?.(l));
    this.proc.on('exit', (code) => {
      for (const q of this.queue.splice(0))
        q(JSON.stringify({ error: `lf_bench exited (${code}): ${this.stderr.trim()}` }));
    });
  }

  static async start(
    modelPath: string,
    threads: number,
    maxBatch?: number,
  ): Promise<LeapfrogEngine> {
    const e = new LeapfrogEngine(modelPath, threads, maxBatch);
    const ready = JSON.parse(await e.next()) as {
      ready?: boolean;
      info?: ModelInfo;
      error?: string;
    };
    if (!ready.ready || !ready.info) throw new Error(ready.error ?? 'lf_bench did not start');
    e.info = ready.info;
    return e;
  }

  private next(): Promise<string> {
    return new Promise((resolve) => this.queue.push(resolve));
  }

  private async cmd(c: string, n: number): Promise<number> {
    const p = this.next();
    this.proc.stdin.write(`${c} ${n}\n`);
    const r = JSON.parse(await p) as { ms?: number; error?: string };
    if (r.error || r.ms === undefined) throw new Error(`lf_bench ${c} ${n}: ${r.error}`);
    return r.ms;
  }

  pp(n: number): Promise<number> {
    return this.cmd('pp', n);
  }
  tg(n: number): Promise<number> {
    return this.cmd('tg', n);
  }
  ctx(n: number): Promise<number> {
    return this.cmd('ctx', n);
  }
  pass(n: number): Promise<number> {
    return this.cmd('pass', n);
  }
  async dispose(): Promise<void> {
    this.proc.stdin.end('quit\n');
    await new Promise((r) => this.proc.once('exit', r));
  }
}

type NLC = typeof import('node-llama-cpp');
const importESM = new Function('s', 'return import(s)') as (s: string) => Promise<NLC>;
let llamaPromise: Promise<{ nlc: NLC; llama: Llama }> | null = null;

export function getLlama(): Promise<{ nlc: NLC; llama: Llama }> {
  llamaPromise ??= importESM('node-llama-cpp').then(async (nlc) => ({
    nlc,
    llama: await nlc.getLlama({
      gpu: false,
      build: 'never',
      logLevel: nlc.LlamaLogLevel.error,
      progressLogs: false,
    }),
  }));
  return llamaPromise;
}

/**
 * llama.cpp through node-llama-cpp. Context: 2048 cells (fits 1024 + 32 and 512 + 129),
 * batch 512 (llama.cpp's default micro-batch), F16 K/V cache, flash attention off.
 *  pp N:   clearHistory, evaluateWithoutGeneratingNewTokens(N ids).
 *  tg N:   clearHistory, then sequence.evaluate([id]) (its own generation loop, greedy):
 *          the first token untimed, the next N timed.
 *  pass n: controlledEvaluate(n ids, each asking for its next token: logits of every row,
 *          as verifying a draft needs, plus a greedy pick per row), then
 *          eraseContextTokenRanges back to the context.
 */
export class LlamaCppEngine implements Engine {
  readonly name = 'llama.cpp';
  private constructor(
    private model: LlamaModel,
    private context: LlamaContext,
    private seq: LlamaContextSequence,
    private nVocab: number,
  ) {}

  static async start(modelPath: string, threads: number, nVocab: number): Promise<LlamaCppEngine> {
    const { llama } = await getLlama();
    const model = await llama.loadModel({ modelPath, gpuLayers: 0, useMmap: true });
    const context = await model.createContext({
      contextSize: 2048,
      batchSize: 512,
      sequences: 1,
      flashAttention: false,
      threads,
    });
    return new LlamaCppEngine(model, context, context.getSequence(), nVocab);
  }

  async pp(n: number): Promise<number> {
    await this.seq.clearHistory();
    const ids = benchTokens(n, this.nVocab, 1);
    const t0 = performance.now();
    await this.seq.evaluateWithoutGeneratingNewTokens(ids as Token[]);
    return performance.now() - t0;
  }

  async tg(n: number): Promise<number> {
    await this.seq.clearHistory();
    const ids = benchTokens(1, this.nVocab, 2);
    let t0 = 0;
    let k = 0;
    for await (const tok of this.seq.evaluate(ids as Token[], { temperature: 0 })) {
      void tok;
      if (k === 0) t0 = performance.now();
      if (k++ >= n) break;
    }
    return performance.now() - t0;
  }

  async ctx(n: number): Promise<number> {
    return this.pp(n);
  }

  async pass(n: number): Promise<number> {
    const base = this.seq.nextTokenIndex;
    const ids = benchTokens(n, this.nVocab, 4 + base);
    const t0 = performance.now();
    await this.seq.controlledEvaluate(
      ids.map((t) => [t as Token, { generateNext: { token: true } }]),
    );
    const ms = performance.now() - t0;
    await this.seq.eraseContextTokenRanges([{ start: base, end: base + n }]);
    return ms;
  }

  async dispose(): Promise<void> {
    await this.context.dispose();
    await this.model.dispose();
  }
}
