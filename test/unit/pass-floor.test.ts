// The benchmark's floor for a batched pass (test/bench/pass-floor.ts): the products bound by
// the slower of memory and int8 compute, attention added at the fp32 rate.
import { strict as assert } from 'node:assert';
import { floorRule, passFloor } from '../bench/pass-floor';

// A Qwen2-0.5B-shaped Q8_0 file as lf_bench reports it.
const model = {
  n_layer: 24,
  n_head: 14,
  head_dim: 64,
  head_dim_v: 64,
  weight_bytes: 524_800_000,
  matmul_params: 494_000_000,
};
const roof = { mem_read_gbs: 50, int8_gops: 1000, fp32_gflops: 200 };

describe('pass floor', () => {
  it('charges one token the weights read once, plus attention', () => {
    const f = passFloor(model, roof, 1024, 1);
    assert.ok(Math.abs(f.memory_ms - 10.496) < 1e-9); // 524.8 MB at 50 GB/s
    assert.ok(Math.abs(f.compute_ms - 0.988) < 1e-9); // 988 M int8 ops at 1,000 GOP/s
    // 2 · 1 · 14 · 128 · 1024 · 24 flops at 200 GFLOP/s
    assert.ok(Math.abs(f.attention_ms - 0.44040192) < 1e-9);
    assert.ok(Math.abs(f.ms - (10.496 + 0.44040192)) < 1e-9);
  });

  it('turns compute-bound once the int8 work outlasts the read', () => {
    const f = passFloor(model, roof, 1024, 16);
    assert.ok(f.compute_ms > f.memory_ms);
    assert.ok(Math.abs(f.ms - (16 * 0.988 + 16 * 0.44040192)) < 1e-9);
  });

  it('counts the value head size apart from the key head size', () => {
    const a = passFloor({ ...model, head_dim_v: 128 }, roof, 512, 4).attention_ms;
    const b = passFloor(model, roof, 512, 4).attention_ms;
    assert.ok(Math.abs(a / b - 192 / 128) < 1e-12);
  });

  it('states the rule with the roofs it used', () => {
    const s = floorRule(roof, 1024);
    for (const part of ['50.0 GB/s', '1000 GOP/s', '200 GFLOP/s', '1024 positions']) {
      assert.ok(s.includes(part), `${part} missing from: ${s}`);
    }
  });
});
