// What one GGUF is, from its header alone: architecture, size in parameters, quantization,
// context, FIM and chat support, tokenizer fingerprint, and whether the native engine can
// load it (with the reason when it cannot). Never throws: a file that cannot be read or
// parsed is described as unsupported, with the reason.
import { readGgufHeader, GgufFormatError, type GgufHeader, type GgufMetaValue } from './gguf-header';
import {
  SUPPORTED_ARCHITECTURES,
  SUPPORTED_ROPE_SCALING,
  SUPPORTED_TENSOR_TYPES,
  SUPPORTED_TOKENIZERS,
  fileTypeName,
  tensorBytes,
  tensorTypeName,
} from './ggml-types';
import { TOKENS_KEY, TokenizerScan } from './tokenizer-scan';
import type { DiscoveredModel } from '../../protocol';

/** What a file's header says: the protocol's entry less where the file was found. */
export type ModelFacts = Pick<
  DiscoveredModel,
  | 'architecture'
  | 'parameters'
  | 'quantization'
  | 'context'
  | 'fim'
  | 'chatTemplate'
  | 'fingerprint'
  | 'supported'
  | 'reason'
>;

/** What is known of a file that could not be read: nothing but the reason. */
export function unreadableFacts(reason: string): ModelFacts {
  return {
    architecture: null,
    parameters: null,
    quantization: null,
    context: null,
    fim: false,
    chatTemplate: false,
    fingerprint: null,
    supported: false,
    reason,
  };
}

export async function describeModelFile(path: string): Promise<ModelFacts> {
  const scan = new TokenizerScan();
  let header: GgufHeader;
  try {
    header = await readGgufHeader(path, {
      visitStrings: (key) => (key === TOKENS_KEY ? scan.visitTokens : undefined),
    });
  } catch (err) {
    return unreadableFacts(readFailure(err));
  }
  return factsOf(header, scan);
}

function readFailure(err: unknown): string {
  if (err instanceof GgufFormatError) return err.message;
  const code = (err as NodeJS.ErrnoException).code;
  if (code === 'EACCES' || code === 'EPERM') return 'cannot read: permission denied';
  if (code === 'ENOENT') return 'cannot read: the file is gone (a broken link?)';
  return `cannot read: ${err instanceof Error ? err.message : String(err)}`;
}

function factsOf(h: GgufHeader, scan: TokenizerScan): ModelFacts {
  const meta = h.metadata;
  const architecture = stringMeta(meta, 'general.architecture');
  const parameters = h.tensors.reduce((sum, t) => sum + elements(t.dims), 0);
  const fimTrained = meta.get('leapfrog.prompt.fim') !== false;
  const facts: ModelFacts = {
    architecture,
    parameters: h.tensors.length > 0 ? parameters : null,
    quantization: quantization(h),
    context: architecture ? numberMeta(meta, `${architecture}.context_length`) : null,
    fim: scan.hasFimTokens(meta) && fimTrained,
    chatTemplate: !!stringMeta(meta, 'tokenizer.chat_template'),
    fingerprint: scan.fingerprint(meta),
    supported: true,
  };
  const reason = unsupportedReason(h, architecture, scan);
  return reason ? { ...facts, supported: false, reason } : facts;
}

/** The first reason the native loader would refuse this file, or undefined. */
function unsupportedReason(
  h: GgufHeader,
  architecture: string | null,
  scan: TokenizerScan,
): string | undefined {
  const meta = h.metadata;
  const split = numberMeta(meta, 'split.count');
  if (split !== null && split > 1) {
    return `split into ${split} files; the engine loads single-file GGUFs only`;
  }
  if (!architecture) return 'no general.architecture in the metadata';
  if (!SUPPORTED_ARCHITECTURES.includes(architecture)) {
    return `architecture '${architecture}' is not supported (supported: ${SUPPORTED_ARCHITECTURES.join(', ')})`;
  }
  if (h.tensors.length === 0) return 'no weights (a vocabulary-only GGUF)';
  // Long-context phi3 files (native/src/model/arch_phi3.cpp refuses them).
  if (h.tensors.some((t) => /(^|\.)rope_factors_(long|short)\.weight$/.test(t.name))) {
    return 'long-context RoPE factors (rope_factors_long/short) are not supported';
  }
  const unsupported = h.tensors.filter((t) => !SUPPORTED_TENSOR_TYPES.has(t.type));
  if (unsupported.length > 0) {
    const types = [...new Set(unsupported.map((t) => tensorTypeName(t.type)))].join(', ');
    const known = [...SUPPORTED_TENSOR_TYPES].map(tensorTypeName).join(', ');
    return `tensor type ${types} is not supported (${unsupported.length} tensors, e.g. '${unsupported[0].name}'); the engine reads ${known}`;
  }
  const tokenizer = stringMeta(meta, 'tokenizer.ggml.model');
  if (!tokenizer || scan.tokens === 0) return 'no tokenizer in this file';
  if (!SUPPORTED_TOKENIZERS.includes(tokenizer)) {
    return `tokenizer '${tokenizer}' is not supported (supported: ${SUPPORTED_TOKENIZERS.join(', ')})`;
  }
  const scaling = stringMeta(meta, `${architecture}.rope.scaling.type`);
  if (scaling && !SUPPORTED_ROPE_SCALING.includes(scaling)) {
    return `RoPE scaling '${scaling}' is not supported (supported: ${SUPPORTED_ROPE_SCALING.join(', ')})`;
  }
  return truncation(h);
}

/** A download cut short keeps its header: the tensors then end past the end of the file. */
function truncation(h: GgufHeader): string | undefined {
  let end = h.dataStart;
  let last = '';
  for (const t of h.tensors) {
    const bytes = tensorBytes(t.type, elements(t.dims), t.dims[0]);
    if (bytes === undefined) continue;
    const tensorEnd = h.dataStart + t.offset + bytes;
    if (tensorEnd > end) {
      end = tensorEnd;
      last = t.name;
    }
  }
  if (end <= h.fileSize) return undefined;
  return `truncated: tensor '${last}' ends at byte ${end}, past the end of the file (${h.fileSize} bytes)`;
}

/** general.file_type's name, else the type holding most weights (tensors of 2+ dims). */
function quantization(h: GgufHeader): string | null {
  const fileType = numberMeta(h.metadata, 'general.file_type');
  const named = fileType === null ? undefined : fileTypeName(fileType);
  if (named) return named;
  const byType = new Map<number, number>();
  for (const t of h.tensors) {
    if (t.dims.length < 2) continue;
    byType.set(t.type, (byType.get(t.type) ?? 0) + elements(t.dims));
  }
  let best: number | undefined;
  for (const [type, n] of byType) if (best === undefined || n > byType.get(best)!) best = type;
  return best === undefined ? null : tensorTypeName(best);
}

function elements(dims: number[]): number {
  return dims.reduce((a, b) => a * b, 1);
}

function stringMeta(meta: Map<string, GgufMetaValue>, key: string): string | null {
  const v = meta.get(key);
  return typeof v === 'string' && v !== '' ? v : null;
}

function numberMeta(meta: Map<string, GgufMetaValue>, key: string): number | null {
  const v = meta.get(key);
  return typeof v === 'number' && Number.isFinite(v) ? v : null;
}
