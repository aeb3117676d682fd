// CPU section (issue 4): pp512, tg128 and batched passes of n tokens on a 1024-token
// context, Leapfrog (lf_bench --serve) and llama.cpp (node-llama-cpp) on the same file with
// the same threads, in the same run, alternating measurement by measurement (the engine that
// goes first swaps every repetition), medians over the repetitions.
import type { Roofline } from './roofline';
import { floorRule, passFloor } from './pass-floor';
import { LeapfrogEngine, LlamaCppEngine, type Engine, type ModelInfo } from './engines';

export interface CpuOptions {
  threads: number;
  reps: number;
  pp: number;
  tg: number;
  ctx: number;
  batches: number[];
  llama: boolean;
  /** Leapfrog's tokens per forward call (its session's max_batch); default: the engine's. */
  lfMaxBatch?: number;
  log: (s: string) => void;
}

export interface Figure {
  ms: number[];
  median_ms: number;
}

export interface EngineResult {
  pp?: Figure & { tokens_per_second: number };
  tg?: Figure & { tokens_per_second: number };
  /**
   * floor_ms: what this machine's roofs allow (pass-floor.ts); vs_floor = median ÷ floor;
   * least_vs_1 = floor ÷ the measured 1-token pass: the least × the roofs allow. Issue 13's
   * targets are ratios, so one under it cannot be met on this machine however fast the batched
   * pass gets, and a faster 1-token pass only raises it.
   */
  passes: (Figure & {
    n: number;
    vs_1: number;
    gops: number;
    floor_ms: number;
    vs_floor: number;
    least_vs_1: number;
  })[];
  error?: string;
}

export interface CpuModelResult {
  label: string;
  path: string;
  info: ModelInfo;
  threads: number;
  ctx: number;
  leapfrog: EngineResult;
  llama?: EngineResult;
  roof: {
    decode_tokens_per_second: number;
    decode_tokens_per_second_wall: number;
    int8_gops: number;
    mem_read_gbs: number;
    fp32_gflops: number;
  };
}

/**
 * Pause before each measurement when two engines take turns: an engine's worker threads spin
 * for a while after their last job before they sleep (llama.cpp's thread pool polls,
 * Leapfrog's spins briefly), and on a 2-core machine the other engine's spinning threads would
 * take cores from the one being timed. The same pause for both engines. With one engine there
 * is nothing to wait for, and the pause would make every pass a pass after idle: on the
 * session-22 Zen 5 VM a 0.5B one-token pass took 11-13 ms back to back and 15-23 ms after 300 ms
 * idle (16-token passes 32.5 -> 40 ms; one thread +3-4 ms too: the host's, not the pool's).
 */
const SETTLE_MS = 300;
const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

export function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length === 0 ? NaN : s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
}

function figure(ms: number[]): Figure {
  return { ms: ms.map((x) => Math.round(x * 1000) / 1000), median_ms: median(ms) };
}

export async function benchCpuModel(
  label: string,
  path: string,
  roof: Roofline,
  o: CpuOptions,
): Promise<CpuModelResult> {
  const lf = await LeapfrogEngine.start(path, o.threads, o.lfMaxBatch);
  const info = lf.info;
  const engines: Engine[] = [lf];
  let llama: LlamaCppEngine | undefined;
  let llamaError: string | undefined;
  if (o.llama) {
    try {
      llama = await LlamaCppEngine.start(path, o.threads, info.n_vocab);
      engines.push(llama);
    } catch (e) {
      llamaError = (e as Error).message;
      o.log(`  llama.cpp could not load ${path}: ${llamaError}`);
    }
  }
  const settle = (): Promise<void> => (engines.length > 1 ? sleep(SETTLE_MS) : Promise.resolve());
  const samples = new Map<Engine, { pp: number[]; tg: number[]; pass: Map<number, number[]> }>();
  for (const e of engines)
    samples.set(e, { pp: [], tg: [], pass: new Map(o.batches.map((n) => [n, []])) });
  const order = (r: number): Engine[] => (r % 2 ? [...engines].reverse() : engines);

  // Warm-up: page the weights in and let each engine size its buffers.
  for (const e of engines) await e.pass(1);

  for (let r = 0; r < o.reps; r++) {
    for (const e of order(r)) {
      if (o.pp > 0) {
        await settle();
        samples.get(e)!.pp.push(await e.pp(o.pp));
      }
      if (o.tg > 0) {
        await settle();
        samples.get(e)!.tg.push(await e.tg(o.tg));
      }
    }
    o.log(
      `  rep ${r + 1}/${o.reps}: ` +
        engines
          .map((e) => {
            const s = samples.get(e)!;
            return `${e.name} pp ${((o.pp * 1000) / s.pp.at(-1)!).toFixed(1)} t/s, tg ${((o.tg * 1000) / s.tg.at(-1)!).toFixed(2)} t/s`;
          })
          .join(' | '),
    );
  }
  if (o.batches.length) {
    for (const e of engines) {
      const ms = await e.ctx(o.ctx);
      o.log(`  ${e.name}: ${o.ctx}-token context in ${(ms / 1000).toFixed(1)} s`);
    }
    for (const e of engines) await e.pass(o.batches[0]!); // warm-up on top of the context
    for (let r = 0; r < o.reps; r++) {
      for (const n of o.batches)
        for (const e of order(r + n)) {
          await settle();
          samples
            .get(e)!
            .pass.get(n)!
            .push(await e.pass(n));
        }
    }
  }
  for (const e of engines) await e.dispose();

  const result = (e: Engine): EngineResult => {
    const s = samples.get(e)!;
    const res: EngineResult = { passes: [] };
    if (s.pp.length) res.pp = { ...figure(s.pp), tokens_per_second: (o.pp * 1000) / median(s.pp) };
    if (s.tg.length) res.tg = { ...figure(s.tg), tokens_per_second: (o.tg * 1000) / median(s.tg) };
    const one = median(s.pass.get(1) ?? []);
    for (const n of o.batches) {
      const f = figure(s.pass.get(n)!);
      const floor = passFloor(info, roof, o.ctx, n).ms;
      res.passes.push({
        n,
        ...f,
        vs_1: f.median_ms / one,
        gops: (2 * info.matmul_params * n) / (f.median_ms * 1e6),
        floor_ms: floor,
        vs_floor: f.median_ms / floor,
        least_vs_1: floor / one,
      });
    }
    return res;
  };
  return {
    label,
    path,
    info,
    threads: o.threads,
    ctx: o.ctx,
    leapfrog: result(lf),
    llama: llama ? result(llama) : llamaError ? { passes: [], error: llamaError } : undefined,
    roof: {
      decode_tokens_per_second: (roof.mem_read_gbs * 1e9) / info.weight_bytes,
      decode_tokens_per_second_wall: (roof.mem_read_gbs_wall * 1e9) / info.weight_bytes,
      int8_gops: roof.int8_gops,
      mem_read_gbs: roof.mem_read_gbs,
      fp32_gflops: roof.fp32_gflops,
    },
  };
}

const pct = (x: number): string => (Number.isFinite(x) ? `${(100 * x).toFixed(0)}%` : '—');
const num = (x: number | undefined, d = 1): string =>
  x === undefined || !Number.isFinite(x) ? '—' : x.toFixed(d);

/** Markdown tables of one model's results. */
export function cpuTables(r: CpuModelResult): string {
  const lf = r.leapfrog;
  const ll = r.llama;
  const lines: string[] = [];
  const gb = (r.info.weight_bytes / 1e9).toFixed(2);
  lines.push(
    `**${r.label}** — ${r.path.replace(/.*\/(test|models)\//, '$1/')}, ${gb} GB read per token, ` +
      `${(r.info.matmul_params / 1e6).toFixed(0)} M matmul params, ${r.threads} threads; ` +
      `decode roof ${num(r.roof.decode_tokens_per_second)} t/s (${num(r.roof.decode_tokens_per_second_wall)} t/s at this run's wall-clock bandwidth)`,
  );
  lines.push('');
  lines.push(
    '| | Leapfrog | llama.cpp | Leapfrog / llama.cpp | Leapfrog % of roof | llama.cpp % of roof |',
  );
  lines.push('|---|---:|---:|---:|---:|---:|');
  if (lf.pp) {
    const a = lf.pp.tokens_per_second;
    const b = ll?.pp?.tokens_per_second;
    const ops = (t: number): number => (2 * r.info.matmul_params * t) / 1e9 / r.roof.int8_gops;
    lines.push(
      `| pp (t/s) | ${num(a)} | ${num(b)} | ${b ? num(a / b, 2) + '×' : '—'} | ${pct(ops(a))} int8 | ${b ? pct(ops(b)) + ' int8' : '—'} |`,
    );
  }
  if (lf.tg) {
    const a = lf.tg.tokens_per_second;
    const b = ll?.tg?.tokens_per_second;
    const roof = r.roof.decode_tokens_per_second;
    lines.push(
      `| tg (t/s) | ${num(a, 2)} | ${num(b, 2)} | ${b ? num(a / b, 2) + '×' : '—'} | ${pct(a / roof)} mem | ${b ? pct(b / roof) + ' mem' : '—'} |`,
    );
  }
  lines.push('');
  if (lf.passes.length) {
    lines.push(
      `Batched pass on a ${r.ctx}-token context (ms, median; × = cost relative to a 1-token pass; % = int8 peak ${num(r.roof.int8_gops, 0)} GOP/s):`,
    );
    lines.push('');
    lines.push(
      `Floor (pass-floor.ts): ${floorRule(r.roof, r.ctx)}. Least × the roofs allow = floor ÷ the measured 1-token pass: a ratio target below it cannot be met on this machine.`,
    );
    lines.push('');
    lines.push(
      '| n | Leapfrog ms | × | % int8 | floor ms | × floor | least × the roofs allow | llama.cpp ms | × | % int8 | Leapfrog / llama.cpp time |',
    );
    lines.push('|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|');
    for (const p of lf.passes) {
      const q = ll?.passes.find((x) => x.n === p.n);
      lines.push(
        `| ${p.n} | ${num(p.median_ms)} | ${num(p.vs_1, 2)} | ${pct(p.gops / r.roof.int8_gops)} | ${num(p.floor_ms, 2)} | ${num(p.vs_floor, 2)} | ${num(p.least_vs_1, 2)} | ${num(q?.median_ms)} | ${num(q?.vs_1, 2)} | ${q ? pct(q.gops / r.roof.int8_gops) : '—'} | ${q ? num(p.median_ms / q.median_ms, 2) : '—'} |`,
      );
    }
  }
  if (ll?.error) lines.push(`\nllama.cpp: ${ll.error}`);
  return lines.join('\n');
}
