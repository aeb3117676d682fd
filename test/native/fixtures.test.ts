// The test fixtures themselves: GGUF writer/reader, quantizers, random models, and the
// llama.cpp oracle. Run: npx mocha --import=tsx 'test/native/fixtures.test.ts'
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { readGGUF, readTensorData, tokenizerMetadata } from '../fixtures/gguf-reader';
import {
  GGMLType,
  GGUFValueType,
  arr,
  bool,
  encodeGGUF,
  f32,
  f64,
  i16,
  i32,
  i64,
  i8,
  str,
  u16,
  u32,
  u64,
  u8,
  writeGGUF,
  type GGUFTensorSpec,
  type GGUFValue,
} from '../fixtures/gguf-writer';
import {
  bf16ToF32,
  dequantize,
  f16ToF32,
  f32ToBF16,
  f32ToF16,
  quantize,
} from '../fixtures/quantize';
import { ALL_TYPES, Rng, makeRandomModel, releaseWeightMemo } from '../fixtures/random-model';
import { missingVocab, vocabPath } from '../fixtures/shared-data';
import { fixtureMatrix, logitDiff, skipBecause } from './helpers';
import {
  disposeOracle,
  getOracleLlama,
  greedy,
  lastLogits,
  promptTokens,
} from '../oracle/llama-cpp';

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'leapfrog-fixtures-'));
after(() => fs.rmSync(tmp, { recursive: true, force: true }));

describe('GGUF writer/reader', () => {
  const metadata: [string, GGUFValue][] = [
    ['general.architecture', str('llama')],
    ['t.u8', u8(255)],
    ['t.i8', i8(-128)],
    ['t.u16', u16(65535)],
    ['t.i16', i16(-32768)],
    ['t.u32', u32(4294967295)],
    ['t.i32', i32(-2147483648)],
    ['t.u64', u64(18446744073709551615n)],
    ['t.i64', i64(-9223372036854775808n)],
    ['t.f32', f32(1.5)],
    ['t.f64', f64(Math.PI)],
    ['t.bool', bool(true)],
    ['t.bool0', bool(false)],
    ['t.str', str('héllo ✓ \u{1F600}')],
    ['t.empty', str('')],
    ['t.arr.i32', arr(GGUFValueType.INT32, [1, -2, 3])],
    ['t.arr.f32', arr(GGUFValueType.FLOAT32, [0.5, -0.25])],
    ['t.arr.str', arr(GGUFValueType.STRING, ['a', 'ß', ''])],
    ['t.arr.u8', arr(GGUFValueType.UINT8, [0, 1, 255])],
    ['t.arr.bool', arr(GGUFValueType.BOOL, [true, false])],
    ['t.arr.u64', arr(GGUFValueType.UINT64, [0n, 2n ** 40n])],
    ['t.arr.f64', arr(GGUFValueType.FLOAT64, [1e300])],
    ['t.arr.empty', arr(GGUFValueType.INT32, [])],
    [
      't.arr.nested',
      arr(GGUFValueType.ARRAY, [
        { itemType: GGUFValueType.INT16, value: [1, 2] },
        { itemType: GGUFValueType.STRING, value: ['x'] },
      ]),
    ],
  ];
  const tensors: GGUFTensorSpec[] = [
    {
      name: 'a',
      type: GGMLType.F32,
      dims: [3, 2],
      data: new Uint8Array(new Float32Array([1, 2, 3, 4, 5, 6]).buffer),
    },
    {
      name: 'b.q8',
      type: GGMLType.Q8_0,
      dims: [64],
      data: quantize(GGMLType.Q8_0, new Float32Array(64).fill(1)),
    },
    {
      name: 'c.f16',
      type: GGMLType.F16,
      dims: [5],
      data: quantize(GGMLType.F16, new Float32Array([1, 2, 3, 4, 5])),
    },
  ];

  for (const version of [2, 3] as const) {
    for (const alignment of [32, 64]) {
      it(`round-trips every value type and tensor data (v${version}, alignment ${alignment})`, () => {
        const file = path.join(tmp, `rt-${version}-${alignment}.gguf`);
        writeGGUF(file, { version, alignment, metadata, tensors });
        const bytes = fs.readFileSync(file);
        assert.deepEqual(bytes, encodeGGUF({ version, alignment, metadata, tensors }));
        assert.equal(bytes.toString('latin1', 0, 4), 'GGUF');
        const g = readGGUF(file);
        assert.equal(g.version, version);
        assert.equal(g.alignment, alignment);
        const expected = new Map(metadata);
        if (alignment !== 32) expected.set('general.alignment', u32(alignment));
        assert.equal(g.metadata.size, expected.size);
        for (const [k, v] of expected) assert.deepEqual(g.metadata.get(k), v, k);
        assert.equal(g.dataStart % alignment, 0);
        assert.deepEqual(
          g.tensors.map((t) => [t.name, t.type, t.dims]),
          tensors.map((t) => [t.name, t.type, t.dims]),
        );
        for (const t of g.tensors)
          assert.equal(t.offset % alignment, 0, `${t.name} offset aligned`);
        for (const t of tensors)
          assert.deepEqual(new Uint8Array(readTensorData(file, g, t.name)), t.data);
        assert.equal(bytes.length % alignment, 0);
      });
    }
  }

  it('rejects tensor data of the wrong size and rows that do not fit the block size', () => {
    assert.throws(
      () => encodeGGUF({ metadata: [], tensors: [{ ...tensors[0]!, dims: [4, 2] }] }),
      /bytes given/,
    );
    assert.throws(() => quantize(GGMLType.Q4_K, new Float32Array(128)), /multiple/);
  });

  it('copies the tokenizer metadata of a real vocabulary losslessly', function () {
    this.timeout(30_000);
    const why = missingVocab('qwen2', 'llama-spm');
    if (why) skipBecause(this, why);
    for (const name of ['qwen2', 'llama-spm']) {
      const src = readGGUF(vocabPath(name));
      const tok = tokenizerMetadata(src);
      assert.ok(tok.some(([k]) => k === 'tokenizer.ggml.tokens'));
      const file = path.join(tmp, `tok-${name}.gguf`);
      writeGGUF(file, { metadata: tok, tensors: [] });
      const back = readGGUF(file);
      assert.deepEqual([...back.metadata], tok);
    }
  });
});

describe('quantizers', () => {
  it('f16 and bf16 conversions round to nearest even', () => {
    assert.equal(f32ToF16(1), 0x3c00);
    assert.equal(f32ToF16(-2), 0xc000);
    assert.equal(f32ToF16(65504), 0x7bff);
    assert.equal(f32ToF16(65520), 0x7c00); // rounds up to infinity
    assert.equal(f32ToF16(2 ** -24), 0x0001); // smallest subnormal
    assert.equal(f32ToF16(2 ** -25), 0x0000); // ties to even: 0
    assert.equal(f32ToF16(1 + 2 ** -11), 0x3c00); // tie -> even
    assert.equal(f32ToF16(1 + 3 * 2 ** -11), 0x3c02); // tie -> even (up)
    assert.equal(f16ToF32(0x3555), 0.333251953125);
    assert.equal(f32ToBF16(1), 0x3f80);
    assert.equal(f32ToBF16(1 + 2 ** -8), 0x3f80); // tie -> even
    assert.equal(f32ToBF16(1 + 3 * 2 ** -8), 0x3f82);
    assert.equal(bf16ToF32(0xc040), -3);
    assert.ok(Number.isNaN(bf16ToF32(f32ToBF16(NaN))));
  });

  it('Q8_0 encodes a known block', () => {
    const x = Float32Array.from({ length: 32 }, (_, j) => j - 16);
    const b = quantize(GGMLType.Q8_0, x);
    assert.equal(b.length, 34);
    assert.equal(b[0]! | (b[1]! << 8), 0x3008); // f16(16/127) = 0.1259765625
    assert.equal((b[2]! << 24) >> 24, -127); // -16 / 0.12598 = -127.007
    assert.equal((b[2 + 16]! << 24) >> 24, 0);
    assert.equal((b[2 + 31]! << 24) >> 24, 119); // 15 / 0.12598 = 119.07
  });

  it('Q4_0 encodes a known block (low nibbles = elements 0..15, high = 16..31)', () => {
    const x = Float32Array.from({ length: 32 }, (_, j) => (j % 16) - 8);
    const b = quantize(GGMLType.Q4_0, x);
    const expected = [0x00, 0x3c, ...Array.from({ length: 16 }, (_, j) => j | (j << 4))];
    assert.deepEqual([...b], expected); // d = -8 / -8 = 1
    const y = Float32Array.from({ length: 32 }, (_, j) => (j < 16 ? j : 15 - (j - 16)) - 8);
    const by = quantize(GGMLType.Q4_0, y);
    assert.equal(by[2 + 1], 1 | (14 << 4)); // element 1 -> q 1, element 17 -> q 14
    assert.deepEqual([...dequantize(GGMLType.Q4_0, by, 32)], [...y]);
  });

  function kBlock(five: boolean): Uint8Array {
    const b = new Uint8Array(five ? 176 : 144);
    b[0] = 0x00;
    b[1] = 0x3c; // d = 1
    b[2] = 0x00;
    b[3] = 0x3c; // dmin = 1
    const s = 4;
    b[s + 0] = 2; // sub-block 0: scale 2
    b[s + 4] = 3; // sub-block 0: min 3
    // sub-block 5: scale 37 = 0b10_0101, min 50 = 0b11_0010
    b[s + 9] = (37 & 0xf) | ((50 & 0xf) << 4);
    b[s + 1]! |= (37 >> 4) << 6;
    b[s + 5]! |= (50 >> 4) << 6;
    const qs = five ? 48 : 16;
    b[qs + 0] = 0x07; // element 0 (sub-block 0, low nibble): q = 7
    b[qs + 64 + 1] = 0x90; // element 161 (chunk 2, high nibble = sub-block 5): q = 9
    if (five) b[16 + 1] = 1 << 5; // qh[1] bit 5 (= 2*2+1): element 161 gets +16
    return b;
  }

  it('Q4_K decodes a hand-built block (6-bit packed scales and mins)', () => {
    const y = dequantize(GGMLType.Q4_K, kBlock(false), 256);
    assert.equal(y[0], 2 * 7 - 3);
    assert.equal(y[1], -3);
    assert.equal(y[161], 37 * 9 - 50);
    assert.equal(y[160], -50);
    assert.equal(y[64], 0); // sub-block 2: scale 0, min 0
  });

  it('Q5_K decodes a hand-built block (high bits in qh)', () => {
    const y = dequantize(GGMLType.Q5_K, kBlock(true), 256);
    assert.equal(y[0], 2 * 7 - 3);
    assert.equal(y[161], 37 * 25 - 50);
    assert.equal(y[160], -50);
  });

  it('Q6_K decodes a hand-built block', () => {
    const b = new Uint8Array(210);
    b[208] = 0x00;
    b[209] = 0x3c; // d = 1
    b[0] = 0x21; // ql[0]: element 0 low 1, element 64 low 2
    b[32] = 0x43; // ql[32]: element 32 low 3, element 96 low 4
    b[128] = 0b10_01_00_11; // qh[0]: hi2 of elements 0, 32, 64, 96 = 3, 0, 1, 2
    b[192] = 1;
    b[194] = 2;
    b[196] = 0xff; // -1
    b[198] = 3;
    const y = dequantize(GGMLType.Q6_K, b, 256);
    assert.equal(y[0], 1 * (1 + 3 * 16 - 32));
    assert.equal(y[32], 2 * (3 - 32));
    assert.equal(y[64], -1 * (2 + 16 - 32));
    assert.equal(y[96], 3 * (4 + 32 - 32));
    assert.equal(y[1], -32); // all-zero bits: q - 32 = -32, times scale 1
  });

  // RMS error relative to the data's RMS, on uniform and Gaussian-like data.
  const bounds: [GGMLType, number, number][] = [
    // type, rms bound, max-abs bound (relative to the data's max |x|)
    [GGMLType.F16, 3e-4, 5e-4],
    [GGMLType.BF16, 3e-3, 4e-3],
    [GGMLType.Q8_0, 0.012, 0.006],
    [GGMLType.Q4_0, 0.12, 0.08],
    [GGMLType.Q5_0, 0.06, 0.04],
    [GGMLType.Q4_K, 0.12, 0.07],
    [GGMLType.Q5_K, 0.055, 0.035],
    [GGMLType.Q6_K, 0.028, 0.02],
  ];
  for (const [type, rmsBound, maxBound] of bounds) {
    it(`${GGMLType[type]} round trip stays within its error bound`, () => {
      const rng = new Rng(42);
      const n = 256 * 64;
      const x = new Float32Array(n);
      for (let i = 0; i < n; i++) {
        // a mix of scales across blocks, and some heavy-ish tails
        const u = rng.float() + rng.float() + rng.float() - 1.5;
        x[i] = u * (1 + ((i >> 8) % 4)) * (i % 97 === 0 ? 4 : 1);
      }
      const y = dequantize(type, quantize(type, x, 256), n);
      let se = 0;
      let sx = 0;
      let maxErr = 0;
      let maxX = 0;
      for (let i = 0; i < n; i++) {
        se += (y[i]! - x[i]!) ** 2;
        sx += x[i]! ** 2;
        maxErr = Math.max(maxErr, Math.abs(y[i]! - x[i]!));
        maxX = Math.max(maxX, Math.abs(x[i]!));
      }
      const rms = Math.sqrt(se / sx);
      console.log(
        `      ${GGMLType[type]}: rms ${rms.toExponential(2)}, max ${(maxErr / maxX).toExponential(2)}`,
      );
      assert.ok(rms < rmsBound, `${GGMLType[type]} relative rms error ${rms} >= ${rmsBound}`);
      assert.ok(
        maxErr / maxX < maxBound,
        `${GGMLType[type]} max error ${maxErr / maxX} >= ${maxBound}`,
      );
      // idempotent on its own grid: re-encoding decoded values changes nothing by more than rounding
      const z = dequantize(type, quantize(type, y, 256), n);
      let re = 0;
      for (let i = 0; i < n; i++) re = Math.max(re, Math.abs(z[i]! - y[i]!));
      assert.ok(re / maxX < maxBound, `${GGMLType[type]} re-quantization drift ${re / maxX}`);
    });
  }
  it('all-zero blocks encode to zeros', () => {
    for (const [type] of bounds) {
      const y = dequantize(type, quantize(type, new Float32Array(256), 256), 256);
      assert.ok(
        y.every((v) => v === 0),
        GGMLType[type],
      );
    }
  });
});

describe('random models in llama.cpp (the oracle)', function () {
  this.timeout(600_000);
  const models = new Map<string, string>();
  const PROMPT = 'def add(a, b):\n    return a + b\n';

  before(async function () {
    const why = missingVocab('qwen2', 'llama-spm');
    if (why) skipBecause(this, why);
    const t0 = Date.now();
    for (const { arch, type } of fixtureMatrix())
      models.set(`${arch}/${type}`, await makeRandomModel({ arch, type }));
    releaseWeightMemo();
    console.log(
      `      fixtures ready in ${((Date.now() - t0) / 1000).toFixed(1)} s (${models.size} models)`,
    );
    const t1 = Date.now();
    await getOracleLlama();
    console.log(`      llama.cpp instance in ${((Date.now() - t1) / 1000).toFixed(1)} s`);
  });
  after(() => disposeOracle());

  it('writes the metadata llama.cpp expects (qwen3 key_length, tied qwen2 output)', function () {
    if (!models.size) this.skip();
    const q3 = readGGUF(models.get('qwen3/F16')!);
    assert.equal(q3.metadata.get('qwen3.attention.key_length')?.value, 64);
    assert.ok(q3.tensors.some((t) => t.name === 'blk.0.attn_q_norm.weight' && t.dims[0] === 64));
    const q2 = readGGUF(models.get('qwen2/F16')!);
    assert.ok(!q2.tensors.some((t) => t.name === 'output.weight'), 'qwen2 F16 is tied');
    assert.ok(q2.tensors.some((t) => t.name === 'blk.1.attn_k.bias'));
    const q2u = readGGUF(models.get('qwen2/BF16')!);
    assert.ok(
      q2u.tensors.some((t) => t.name === 'output.weight'),
      'qwen2 BF16 is untied',
    );
    assert.equal(q2.metadata.get('tokenizer.ggml.pre')?.value, 'qwen2');
  });

  for (const { arch, type } of fixtureMatrix()) {
    it(`${arch} ${type}: loads, and greedy decoding is deterministic and non-degenerate`, async function () {
      const file = models.get(`${arch}/${type}`);
      if (!file) this.skip();
      const prompt = await promptTokens(file, PROMPT);
      assert.ok(prompt.length > 5);
      const a = await greedy(file, prompt, 24);
      const b = await greedy(file, prompt, 24);
      assert.deepEqual(a, b);
      assert.ok(new Set(a).size >= 8, `degenerate continuation ${a.join(',')}`);
    });
  }

  // The decoders in quantize.ts must read the bytes exactly as llama.cpp does: rebuild each
  // quantized llama model as F32 from OUR decoding of its tensors and compare llama.cpp's
  // logits on both files. A wrong layout (nibble order, scale packing) gives errors of the
  // order of the logits themselves; the remaining difference is llama.cpp's quantization of
  // activations (Q8_0 / Q8_K / F16 / BF16) in the quantized file's matmuls.
  // Measured (max |Δ| / σ): F16 2e-3, BF16 1.7e-2, Q8_0 5.2e-2, Q4_0 5.6e-2, Q4_K 6.5e-2, Q5_K 6.0e-2, Q6_K 6.9e-2.
  const layoutTol: Record<string, number> = {
    F16: 0.01,
    BF16: 0.05,
    Q8_0: 0.15,
    Q4_0: 0.15,
    Q5_0: 0.15,
    Q4_K: 0.15,
    Q5_K: 0.15,
    Q6_K: 0.15,
  };
  for (const type of ALL_TYPES.filter((t) => t !== 'F32')) {
    it(`llama ${type}: llama.cpp reads the blocks as our decoder does`, async function () {
      const file = models.get(`llama/${type}`);
      if (!file) this.skip();
      const g = readGGUF(file);
      const f32file = path.join(tmp, `decoded-${type}.gguf`);
      writeGGUF(f32file, {
        metadata: [...g.metadata].map(([k, v]) =>
          k === 'general.file_type' ? [k, u32(0)] : [k, v],
        ),
        tensors: g.tensors.map((t) => {
          const n = t.dims.reduce((p, q) => p * q, 1);
          const y = dequantize(t.type, readTensorData(file, g, t.name), n);
          return { name: t.name, type: GGMLType.F32, dims: t.dims, data: new Uint8Array(y.buffer) };
        }),
      });
      const prompt = await promptTokens(file, PROMPT);
      const zq = await lastLogits(file, prompt);
      const zf = await lastLogits(f32file, prompt);
      const { maxAbs, sd } = logitDiff(zf, zq);
      console.log(
        `      ${type}: max |Δlogit| = ${maxAbs.toFixed(4)} (${(maxAbs / sd).toExponential(2)} σ)`,
      );
      assert.ok(maxAbs / sd < layoutTol[type]!, `max |Δ| ${maxAbs} = ${maxAbs / sd} σ`);
    });
  }
});
