// The ggml tensor types and llama.cpp file types by number, and which of them the native
// engine computes with. The supported set and the block sizes mirror
// native/src/gguf/ggml_types.cpp (the engine's own table); the other names are only for
// telling the user what a file holds.

/** Block size (weights) and bytes per block of the types the native table knows. */
interface BlockLayout {
  blockSize: number;
  blockBytes: number;
}

const TYPE_NAMES: Record<number, string> = {
  0: 'F32',
  1: 'F16',
  2: 'Q4_0',
  3: 'Q4_1',
  6: 'Q5_0',
  7: 'Q5_1',
  8: 'Q8_0',
  9: 'Q8_1',
  10: 'Q2_K',
  11: 'Q3_K',
  12: 'Q4_K',
  13: 'Q5_K',
  14: 'Q6_K',
  15: 'Q8_K',
  16: 'IQ2_XXS',
  17: 'IQ2_XS',
  18: 'IQ3_XXS',
  19: 'IQ1_S',
  20: 'IQ4_NL',
  21: 'IQ3_S',
  22: 'IQ2_S',
  23: 'IQ4_XS',
  24: 'I8',
  25: 'I16',
  26: 'I32',
  27: 'I64',
  28: 'F64',
  29: 'IQ1_M',
  30: 'BF16',
  34: 'TQ1_0',
  35: 'TQ2_0',
  39: 'MXFP4',
};

// native/src/gguf/ggml_types.cpp's kTypes: every type it lists, with its layout.
const LAYOUTS: Record<number, BlockLayout> = {
  0: { blockSize: 1, blockBytes: 4 },
  1: { blockSize: 1, blockBytes: 2 },
  2: { blockSize: 32, blockBytes: 18 },
  3: { blockSize: 32, blockBytes: 20 },
  6: { blockSize: 32, blockBytes: 22 },
  7: { blockSize: 32, blockBytes: 24 },
  8: { blockSize: 32, blockBytes: 34 },
  9: { blockSize: 32, blockBytes: 36 },
  10: { blockSize: 256, blockBytes: 84 },
  11: { blockSize: 256, blockBytes: 110 },
  12: { blockSize: 256, blockBytes: 144 },
  13: { blockSize: 256, blockBytes: 176 },
  14: { blockSize: 256, blockBytes: 210 },
  15: { blockSize: 256, blockBytes: 292 },
  20: { blockSize: 32, blockBytes: 18 },
  23: { blockSize: 256, blockBytes: 136 },
  30: { blockSize: 1, blockBytes: 2 },
};

/** The types the engine computes with (`supported: true` in the native table). */
export const SUPPORTED_TENSOR_TYPES: ReadonlySet<number> = new Set([
  0, 1, 2, 3, 6, 7, 8, 10, 11, 12, 13, 14, 20, 23, 30,
]);

/** Architectures the native loader accepts (native/src/model/arch.cpp, in its order). */
export const SUPPORTED_ARCHITECTURES: readonly string[] = [
  'llama',
  'qwen2',
  'qwen3',
  'qwen3moe',
  'starcoder2',
  'granite',
  'phi3',
  'gemma',
  'gemma2',
  'gemma3',
];

/** RoPE scaling types native/src/model/hparams.cpp accepts (<arch>.rope.scaling.type). */
export const SUPPORTED_ROPE_SCALING: readonly string[] = ['none', 'linear', 'yarn'];

/** Tokenizer models native/src/tokenizer/vocab.cpp accepts. */
export const SUPPORTED_TOKENIZERS: readonly string[] = ['llama', 'gpt2'];

export function tensorTypeName(type: number): string {
  return TYPE_NAMES[type] ?? `type ${type}`;
}

/** Bytes a tensor of this type and shape takes, or undefined when its layout is unknown. */
export function tensorBytes(type: number, elements: number, rowLength: number): number | undefined {
  const layout = LAYOUTS[type];
  if (!layout || rowLength % layout.blockSize !== 0) return undefined;
  return (elements / layout.blockSize) * layout.blockBytes;
}

// llama.cpp's llama_ftype (general.file_type), by the names its quantize tool prints.
const FILE_TYPE_NAMES: Record<number, string> = {
  0: 'F32',
  1: 'F16',
  2: 'Q4_0',
  3: 'Q4_1',
  7: 'Q8_0',
  8: 'Q5_0',
  9: 'Q5_1',
  10: 'Q2_K',
  11: 'Q3_K_S',
  12: 'Q3_K_M',
  13: 'Q3_K_L',
  14: 'Q4_K_S',
  15: 'Q4_K_M',
  16: 'Q5_K_S',
  17: 'Q5_K_M',
  18: 'Q6_K',
  19: 'IQ2_XXS',
  20: 'IQ2_XS',
  21: 'Q2_K_S',
  22: 'IQ3_XS',
  23: 'IQ3_XXS',
  24: 'IQ1_S',
  25: 'IQ4_NL',
  26: 'IQ3_S',
  27: 'IQ3_M',
  28: 'IQ2_S',
  29: 'IQ2_M',
  30: 'IQ4_XS',
  31: 'IQ1_M',
  32: 'BF16',
  36: 'TQ1_0',
  37: 'TQ2_0',
  38: 'MXFP4_MOE',
};

export function fileTypeName(fileType: number): string | undefined {
  return FILE_TYPE_NAMES[fileType];
}
