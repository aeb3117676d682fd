// A lower-bit copy of an F32 model: the same network at Q8_0/Q4_0, which makes a real draft
// model for it (same vocabulary, close but not identical predictions). Matrices whose rows
// do not fit the block size are stored as F16. Cached under test/.fixtures/.
import { existsSync, mkdirSync } from 'node:fs';
import { basename, join } from 'node:path';
import { readGGUF, readTensorData } from '../fixtures/gguf-reader';
import { GGMLType, writeGGUF, type GGUFTensorSpec } from '../fixtures/gguf-writer';
import { quantize } from '../fixtures/quantize';
import { repoRoot } from './paths';

export function requantizedCopy(src: string, type: GGMLType.Q8_0 | GGMLType.Q4_0): string {
  const dir = join(repoRoot, 'test', '.fixtures', 'requantized');
  const out = join(dir, `${basename(src, '.gguf')}-${GGMLType[type]}.gguf`);
  if (existsSync(out)) return out;
  const g = readGGUF(src);
  const tensors: GGUFTensorSpec[] = g.tensors.map((t) => {
    const raw = readTensorData(src, g, t.name);
    if (t.type !== GGMLType.F32) throw new Error(`${src}: ${t.name} is not F32`);
    if (t.dims.length < 2) return { name: t.name, type: t.type, dims: t.dims, data: raw };
    const values = new Float32Array(
      raw.buffer.slice(raw.byteOffset, raw.byteOffset + raw.byteLength),
    );
    const target = t.dims[0] % 32 === 0 ? type : GGMLType.F16;
    return { name: t.name, type: target, dims: t.dims, data: quantize(target, values, t.dims[0]) };
  });
  mkdirSync(dir, { recursive: true });
  writeGGUF(out, { metadata: g.metadata, tensors });
  return out;
}
