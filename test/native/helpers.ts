// Shared by the native test files (not a test file itself).
import * as assert from 'node:assert/strict';
import {
  ALL_ARCHS,
  ALL_TYPES,
  EXTRA_ARCHS,
  LOW_BIT_FIXTURES,
  type Arch,
  type RandomModelOptions,
  type TypeName,
} from '../fixtures/random-model';

/** The architectures beyond llama/qwen, on two types each (one float, one quantized) to keep
 * the suite's time in check: their kernels are the same as the matrix's, their graphs not. */
export const EXTRA_ARCH_FIXTURES: { arch: Arch; type: TypeName }[] = EXTRA_ARCHS.flatMap((arch) =>
  (['F16', 'Q8_0'] as const).map((type) => ({ arch, type })),
);

/** The fixture matrix: 3 archs x 8 types, plus F32 for llama and qwen2, plus one arch per
 * low-bit type (LOW_BIT_FIXTURES). Ordered so that types of one shape are generated one after
 * the other (they share the f32 weights in memory). */
export function fixtureMatrix(): { arch: Arch; type: TypeName }[] {
  const out: { arch: Arch; type: TypeName }[] = [];
  for (const arch of ALL_ARCHS) {
    for (const type of ALL_TYPES) {
      if (type === 'F32' && arch === 'qwen3') continue;
      out.push({ arch, type });
    }
    for (const f of LOW_BIT_FIXTURES) if (f.arch === arch) out.push(f);
  }
  return out;
}

/** Fixtures of one feature each beyond the matrix: RoPE scaling (YaRN with an original context
 * small enough that the test's positions reach the interpolated frequencies, and linear), and
 * the mixture-of-experts architecture in two tensor types. */
export function featureFixtures(): RandomModelOptions[] {
  return [
    { arch: 'qwen3', type: 'Q8_0', ropeScaling: { type: 'yarn', factor: 4, originalContext: 256 } },
    { arch: 'qwen2', type: 'F16', ropeScaling: { type: 'yarn', factor: 4, originalContext: 128 } },
    { arch: 'llama', type: 'Q8_0', ropeScaling: { type: 'linear', factor: 2 } },
    { arch: 'qwen3moe', type: 'Q8_0' },
    { arch: 'qwen3moe', type: 'Q4_K' },
  ];
}

/** A fixture's name in test titles: "qwen3 Q8_0", "qwen3 Q8_0 rope yarn x4 (orig 256)". */
export function fixtureLabel(o: RandomModelOptions): string {
  const r = o.ropeScaling;
  const rope = r
    ? ` rope ${r.type} x${r.factor}${r.originalContext ? ` (orig ${r.originalContext})` : ''}`
    : '';
  return `${o.arch} ${o.type}${rope}`;
}

export { skipBecause } from '../support/paths';

/** Max |Δ| between two logit vectors, the reference's standard deviation, and both argmaxes. */
export function logitDiff(
  ref: Float32Array,
  got: Float32Array,
): { maxAbs: number; sd: number; argmaxRef: number; argmaxGot: number } {
  assert.equal(got.length, ref.length, 'vocabulary sizes differ');
  let maxAbs = 0;
  let s = 0;
  let s2 = 0;
  let ar = 0;
  let ag = 0;
  for (let i = 0; i < ref.length; i++) {
    const r = ref[i]!;
    maxAbs = Math.max(maxAbs, Math.abs(r - got[i]!));
    s += r;
    s2 += r * r;
    if (r > ref[ar]!) ar = i;
    if (got[i]! > got[ag]!) ag = i;
  }
  const n = ref.length;
  return {
    maxAbs,
    sd: Math.sqrt(Math.max(0, s2 / n - (s / n) ** 2)),
    argmaxRef: ar,
    argmaxGot: ag,
  };
}

/** Five short code prompts (tokenized by llama.cpp's tokenizer in the tests). */
export const CODE_PROMPTS: { lang: string; text: string }[] = [
  {
    lang: 'python',
    text: 'def fibonacci(n):\n    if n < 2:\n        return n\n    return fibonacci(n - 1) + fibonacci(n - 2)\n\n',
  },
  {
    lang: 'typescript',
    text: 'export function debounce<T extends (...args: unknown[]) => void>(fn: T, ms: number) {\n  let timer: NodeJS.Timeout | undefined;\n',
  },
  {
    lang: 'c',
    text: '#include <stdio.h>\n\nint main(int argc, char **argv) {\n    for (int i = 0; i < argc; i++) {\n',
  },
  {
    lang: 'rust',
    text: 'fn main() {\n    let v: Vec<u32> = (1..=10).map(|x| x * x).collect();\n    println!("{:?}", v);\n',
  },
  {
    lang: 'javascript',
    text: "const express = require('express');\nconst app = express();\napp.get('/', (req, res) => {\n",
  },
];
