// The floor a machine's own roofs put under a batched pass of n tokens (issue 13: "within
// 1.25x of the floor that machine's roofs imply; state the floor and how it was computed").
//
//   floor(n) = max(weights / memory roof, 2 · matmul params · n / int8 roof) + attention / fp32 roof
//   attention = 2 · n · heads · (key head size + value head size) · context · layers  (flops)
//
// The products are bound by whichever is slower of reading every weight once and doing their
// int8 multiply-adds at the dot-product peak; attention's scores and weighted values are f32
// multiply-adds over the cached context (the softmax, norms and the rest are left out, so the
// floor is a little low). The roofs are lf_roofline's per-CPU-second figures for the level the
// engine runs (LEAPFROG_CPU_ISA lowers both), so a forced AVX2 level is held to AVX2's roofs.
import type { ModelInfo } from './engines';
import type { Roofline } from './roofline';

/** What the floor reads of a model (lf_bench's model line). */
export type FloorModel = Pick<
  ModelInfo,
  'n_layer' | 'n_head' | 'head_dim' | 'head_dim_v' | 'weight_bytes' | 'matmul_params'
>;

export interface PassFloor {
  /** The floor: max(memory_ms, compute_ms) + attention_ms. */
  ms: number;
  memory_ms: number;
  compute_ms: number;
  attention_ms: number;
}

type Roofs = Pick<Roofline, 'mem_read_gbs' | 'int8_gops' | 'fp32_gflops'>;

export function passFloor(m: FloorModel, roof: Roofs, ctx: number, n: number): PassFloor {
  const memory_ms = m.weight_bytes / (roof.mem_read_gbs * 1e6);
  const compute_ms = (2 * m.matmul_params * n) / (roof.int8_gops * 1e6);
  const flops = 2 * n * m.n_head * (m.head_dim + m.head_dim_v) * ctx * m.n_layer;
  const attention_ms = flops / (roof.fp32_gflops * 1e6);
  return {
    ms: Math.max(memory_ms, compute_ms) + attention_ms,
    memory_ms,
    compute_ms,
    attention_ms,
  };
}

/** The rule in words, with this run's roofs, for a report's table header. */
export function floorRule(roof: Roofs, ctx: number): string {
  return (
    `floor = max(weight bytes ÷ ${roof.mem_read_gbs.toFixed(1)} GB/s, 2 · matmul params · n ÷ ` +
    `${roof.int8_gops.toFixed(0)} GOP/s int8) + 2 · n · heads · (key + value head size) · ${ctx} ` +
    `positions · layers flops ÷ ${roof.fp32_gflops.toFixed(0)} GFLOP/s fp32 (this run's lf_roofline)`
  );
}
