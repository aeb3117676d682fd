// What discovery learns from a vocabulary while the header reader streams it past: a short
// fingerprint (two models can share speculative drafts only when their token lists are the
// same) and which fill-in-the-middle tokens it has, found by the texts the native tokenizer
// looks for (native/src/tokenizer/special_tokens.cpp).
import { createHash, type Hash } from 'node:crypto';
import type { GgufMetaValue, StringVisitor } from './gguf-header';

export const TOKENS_KEY = 'tokenizer.ggml.tokens';

const FIM_TEXTS = {
  prefix: [
    '<|fim_prefix|>',
    '<fim-prefix>',
    '<fim_prefix>',
    '<｜fim▁begin｜>',
    '<PRE>',
    '▁<PRE>',
    '<|code_prefix|>',
    '<|prefix|>',
  ],
  suffix: [
    '<|fim_suffix|>',
    '<fim-suffix>',
    '<fim_suffix>',
    '<｜fim▁hole｜>',
    '<SUF>',
    '▁<SUF>',
    '<|code_suffix|>',
    '<|suffix|>',
  ],
  middle: [
    '<|fim_middle|>',
    '<fim-middle>',
    '<fim_middle>',
    '<｜fim▁end｜>',
    '<MID>',
    '▁<MID>',
    '<|code_middle|>',
    '<|middle|>',
  ],
};
type FimRole = keyof typeof FIM_TEXTS;

/** Metadata keys that name a FIM token by id (current and deprecated spellings). */
const FIM_ID_KEYS: Record<FimRole, string[]> = {
  prefix: ['tokenizer.ggml.fim_pre_token_id', 'tokenizer.ggml.prefix_token_id'],
  suffix: ['tokenizer.ggml.fim_suf_token_id', 'tokenizer.ggml.suffix_token_id'],
  middle: ['tokenizer.ggml.fim_mid_token_id', 'tokenizer.ggml.middle_token_id'],
};

const ROLE_OF_TEXT = new Map<string, FimRole>();
for (const role of Object.keys(FIM_TEXTS) as FimRole[]) {
  for (const t of FIM_TEXTS[role]) ROLE_OF_TEXT.set(t, role);
}
const LONGEST_FIM_TEXT = Math.max(...[...ROLE_OF_TEXT.keys()].map((t) => Buffer.byteLength(t)));

export class TokenizerScan {
  private readonly hash: Hash = createHash('sha256');
  private readonly fimByText = new Set<FimRole>();
  private readonly lengthBytes = Buffer.alloc(4);
  private count = 0;

  /** The visitor to give the header reader for `tokenizer.ggml.tokens`. */
  readonly visitTokens: StringVisitor = (bytes) => {
    this.lengthBytes.writeUInt32LE(bytes.length);
    this.hash.update(this.lengthBytes);
    this.hash.update(bytes);
    this.count++;
    if (bytes.length <= LONGEST_FIM_TEXT) {
      const role = ROLE_OF_TEXT.get(bytes.toString('utf8'));
      if (role) this.fimByText.add(role);
    }
  };

  get tokens(): number {
    return this.count;
  }

  /**
   * A 16-hex-digit hash of the tokenizer model, its pre-tokenizer and every token text in
   * order; null when the file has no vocabulary.
   */
  fingerprint(metadata: Map<string, GgufMetaValue>): string | null {
    if (this.count === 0) return null;
    const model = metadata.get('tokenizer.ggml.model');
    const pre = metadata.get('tokenizer.ggml.pre');
    const h = createHash('sha256');
    h.update(`${typeof model === 'string' ? model : ''}\n${typeof pre === 'string' ? pre : ''}\n`);
    h.update(this.hash.copy().digest());
    return h.digest('hex').slice(0, 16);
  }

  /** Whether the vocabulary has prefix, suffix and middle FIM tokens (by id or by text). */
  hasFimTokens(metadata: Map<string, GgufMetaValue>): boolean {
    return (Object.keys(FIM_TEXTS) as FimRole[]).every((role) => {
      if (this.fimByText.has(role)) return true;
      return FIM_ID_KEYS[role].some((k) => {
        const id = metadata.get(k);
        return typeof id === 'number' && id >= 0 && id < this.count;
      });
    });
  }
}
