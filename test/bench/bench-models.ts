// Random-weight GGUFs with Qwen2.5-Coder-0.5B / -1.5B shapes for the speed benchmark,
// written tensor by tensor (a 1.5B model never sits in memory as f32), cached under
// test/.fixtures/bench/ by recipe.
//
// Weights: each matrix gets a pool of 61 random rows (uniform, σ = 1/sqrt(fan_in), the
// embedding σ = 1), quantized with test/fixtures/quantize.ts, and its rows cycle through
// that pool (row i = pool[(7·i) mod 61]). Speed does not depend on the values (no NaNs or
// infinities are written); this keeps writing a 1.6 GB file to seconds instead of the
// minutes (and ~6 GB of f32) that quantizing every row would take. The outputs are
// meaningless; these files are for timing only.
//
// Quantization mixes:
//   Q8_0:   every matrix Q8_0 (norms and biases F32), as llama.cpp's Q8_0 ftype.
//   Q4_K_M: approximates llama.cpp's Q4_K_M: Q4_K for matrices, Q6_K for output.weight
//           (token_embd.weight when the output is tied), and Q6_K for attn_v and ffn_down in
//           llama.cpp's "use_more_bits" layers (the first and last eighth, and every third
//           layer between). Rows that are not a multiple of 256 (hidden 896 of the 0.5B
//           shape) cannot be K-quants: there llama.cpp falls back to Q5_0 (for Q4_K) and
//           Q8_0 (for Q6_K), and so do these files (from version 2; version 1 used Q4_0).
import * as fs from 'node:fs';
import * as path from 'node:path';
import { readGGUF, tokenizerMetadata } from '../fixtures/gguf-reader';
import {
  GGMLType,
  GGML_TYPE_TRAITS,
  f32 as f32v,
  layoutGGUF,
  str,
  tensorByteSize,
  u32,
  type GGUFTensorSpec,
  type GGUFValue,
} from '../fixtures/gguf-writer';
import { quantize } from '../fixtures/quantize';
import { Rng } from '../fixtures/random-model';
import { fixturesDir, vocabPath } from '../fixtures/shared-data';

export type BenchShape = '0.5b' | '1.5b';
export type BenchQuant = 'Q8_0' | 'Q4_K_M';

interface Shape {
  hidden: number;
  layers: number;
  heads: number;
  kvHeads: number;
  ffn: number;
  tied: boolean;
}

export const SHAPES: Record<BenchShape, Shape> = {
  // Qwen2.5-Coder-0.5B ties its output to the embedding; the 1.5B does not.
  '0.5b': { hidden: 896, layers: 24, heads: 14, kvHeads: 2, ffn: 4864, tied: true },
  '1.5b': { hidden: 1536, layers: 28, heads: 12, kvHeads: 2, ffn: 8960, tied: false },
};

const GENERATOR_VERSION = 2;
const POOL = 61;

function useMoreBits(i: number, n: number): boolean {
  const e = Math.floor(n / 8);
  return i < e || i >= 7 * e || (i - e) % 3 === 2;
}

function typeFor(
  quant: BenchQuant,
  name: string,
  rowLen: number,
  layer: number,
  nLayers: number,
  tied: boolean,
): GGMLType {
  if (quant === 'Q8_0') return GGMLType.Q8_0;
  let t = GGMLType.Q4_K;
  const isOutput = name === 'output.weight' || (tied && name === 'token_embd.weight');
  if (isOutput) t = GGMLType.Q6_K;
  else if (
    (name.endsWith('attn_v.weight') || name.endsWith('ffn_down.weight')) &&
    useMoreBits(layer, nLayers)
  )
    t = GGMLType.Q6_K;
  if (rowLen % 256 !== 0) t = t === GGMLType.Q6_K ? GGMLType.Q8_0 : GGMLType.Q5_0;
  return t;
}

export function benchModelPath(shape: BenchShape, quant: BenchQuant): string {
  return path.join(
    fixturesDir(),
    'bench',
    `qwen2-${shape}-${quant}-random-v${GENERATOR_VERSION}.gguf`,
  );
}

interface PlannedTensor {
  name: string;
  type: GGMLType;
  dims: number[];
  /** F32 vectors: mean and σ; matrices: σ of the pool rows. */
  sigma: number;
  mean: number;
}

/** Writes (or finds) the bench model; returns its path. */
export function makeBenchModel(
  shape: BenchShape,
  quant: BenchQuant,
  log: (s: string) => void = () => {},
): string {
  const file = benchModelPath(shape, quant);
  if (fs.existsSync(file)) return file;
  const s = SHAPES[shape];
  const vocab = readGGUF(vocabPath('qwen2'));
  const tokMeta = tokenizerMetadata(vocab);
  const tokens = vocab.metadata.get('tokenizer.ggml.tokens');
  const nVocab = (tokens?.value as unknown[]).length;
  const H = s.hidden;
  const headDim = H / s.heads;
  const kvDim = s.kvHeads * headDim;

  const plan: PlannedTensor[] = [];
  const mat = (name: string, inDim: number, outDim: number, sigma: number, layer = -1): void => {
    plan.push({
      name,
      type: typeFor(quant, name, inDim, layer, s.layers, s.tied),
      dims: [inDim, outDim],
      sigma,
      mean: 0,
    });
  };
  const vec = (name: string, n: number, sigma: number, mean: number): void => {
    plan.push({ name, type: GGMLType.F32, dims: [n], sigma, mean });
  };
  mat('token_embd.weight', H, nVocab, 1);
  for (let l = 0; l < s.layers; l++) {
    const p = `blk.${l}.`;
    vec(`${p}attn_norm.weight`, H, 0.1, 1);
    mat(`${p}attn_q.weight`, H, H, 1 / Math.sqrt(H), l);
    vec(`${p}attn_q.bias`, H, 0.1, 0);
    mat(`${p}attn_k.weight`, H, kvDim, 1 / Math.sqrt(H), l);
    vec(`${p}attn_k.bias`, kvDim, 0.1, 0);
    mat(`${p}attn_v.weight`, H, kvDim, 1 / Math.sqrt(H), l);
    vec(`${p}attn_v.bias`, kvDim, 0.1, 0);
    mat(`${p}attn_output.weight`, H, H, 0.5 / Math.sqrt(H), l);
    vec(`${p}ffn_norm.weight`, H, 0.1, 1);
    mat(`${p}ffn_gate.weight`, H, s.ffn, 1 / Math.sqrt(H), l);
    mat(`${p}ffn_up.weight`, H, s.ffn, 1 / Math.sqrt(H), l);
    mat(`${p}ffn_down.weight`, s.ffn, H, 0.5 / Math.sqrt(s.ffn), l);
  }
  vec('output_norm.weight', H, 0.1, 1);
  if (!s.tied) mat('output.weight', H, nVocab, 1 / Math.sqrt(H));

  const a = 'qwen2';
  const meta: [string, GGUFValue][] = [
    ['general.architecture', str(a)],
    ['general.name', str(`leapfrog-bench-qwen2.5-coder-${shape}-shape-${quant}-random`)],
    ['general.file_type', u32(quant === 'Q8_0' ? 7 : 15)],
    ['general.quantization_version', u32(2)],
    [`${a}.context_length`, u32(32768)],
    [`${a}.embedding_length`, u32(H)],
    [`${a}.block_count`, u32(s.layers)],
    [`${a}.feed_forward_length`, u32(s.ffn)],
    [`${a}.attention.head_count`, u32(s.heads)],
    [`${a}.attention.head_count_kv`, u32(s.kvHeads)],
    [`${a}.attention.layer_norm_rms_epsilon`, f32v(1e-6)],
    [`${a}.rope.freq_base`, f32v(1000000)],
    ...tokMeta,
  ];
  // The layout needs only each tensor's size: stand-ins for the data.
  const specs: GGUFTensorSpec[] = plan.map((t) => ({
    name: t.name,
    type: t.type,
    dims: t.dims,
    data: { length: tensorByteSize(t.type, t.dims) } as Uint8Array,
  }));
  const layout = layoutGGUF({ metadata: meta, tensors: specs });

  fs.mkdirSync(path.dirname(file), { recursive: true });
  const tmp = `${file}.tmp-${process.pid}`;
  const fd = fs.openSync(tmp, 'w');
  const rng = new Rng(shape === '0.5b' ? 5 : 15);
  const t0 = Date.now();
  try {
    fs.writeSync(fd, layout.header);
    let pos = layout.dataStart;
    plan.forEach((t, i) => {
      const at = layout.dataStart + layout.offsets[i]!;
      if (at > pos) fs.writeSync(fd, Buffer.alloc(at - pos));
      pos = at;
      if (t.type === GGMLType.F32) {
        const v = rng.fill(new Float32Array(t.dims[0]!), t.sigma, t.mean);
        const b = Buffer.from(v.buffer);
        fs.writeSync(fd, b);
        pos += b.length;
        return;
      }
      const rowLen = t.dims[0]!;
      const rows = t.dims[1]!;
      const pool = quantize(t.type, rng.fill(new Float32Array(rowLen * POOL), t.sigma), rowLen);
      const tr = GGML_TYPE_TRAITS[t.type]!;
      const rowBytes = (rowLen / tr.blockSize) * tr.blockBytes;
      const chunkRows = Math.max(1, Math.floor((8 << 20) / rowBytes));
      const chunk = Buffer.alloc(chunkRows * rowBytes);
      for (let r0 = 0; r0 < rows; r0 += chunkRows) {
        const n = Math.min(chunkRows, rows - r0);
        for (let k = 0; k < n; k++) {
          const src = ((r0 + k) * 7) % POOL;
          chunk.set(pool.subarray(src * rowBytes, (src + 1) * rowBytes), k * rowBytes);
        }
        fs.writeSync(fd, chunk, 0, n * rowBytes);
      }
      pos += rows * rowBytes;
    });
    if (layout.totalSize > pos) fs.writeSync(fd, Buffer.alloc(layout.totalSize - pos));
  } finally {
    fs.closeSync(fd);
  }
  fs.renameSync(tmp, file);
  log(
    `wrote ${file} (${(layout.totalSize / 1e9).toFixed(2)} GB) in ${((Date.now() - t0) / 1000).toFixed(1)} s`,
  );
  return file;
}

if (require.main === module) {
  for (const shape of ['0.5b', '1.5b'] as BenchShape[]) {
    for (const q of ['Q8_0', 'Q4_K_M'] as BenchQuant[])
      console.log(makeBenchModel(shape, q, console.log));
  }
}
