// The TypeScript view of the native addon (native/src/addon/). Everything the engine does
// with models goes through these types; long work returns promises and runs on engine
// threads, never on Node's event loop.

export interface FimTokenIds {
  prefix: number; // -1 when the vocabulary has none
  suffix: number;
  middle: number;
  pad: number;
  repo: number;
  fileSep: number;
}

export interface ModelInfo {
  path: string;
  name: string;
  architecture: string;
  nVocab: number;
  nCtxTrain: number;
  nParams: number;
  fileBytes: number;
  bos: number; // -1 when absent
  eos: number;
  addBos: boolean;
  eogIds: number[]; // every token that ends generation
  fim: FimTokenIds;
  chatTemplate: string; // "" when the file has none
  tokenizerModel: string; // "llama" | "gpt2"
  vocabOnly: boolean;
}

export interface SamplingParams {
  temperature: number; // 0 = greedy
  topK: number; // 0 = off
  topP: number; // 1 = off
  minP: number; // 0 = off
  repeatPenalty: number; // 1 = off
  repeatLastN: number;
  seed: number;
}

export type SpecMode = 'off' | 'auto' | 'ngram' | 'draft';

export interface GenerateParams extends SamplingParams {
  maxTokens: number;
  stopAtEog: boolean;
  spec: SpecMode;
  budget: number; // largest draft length (0..63)
  /** false: always draft `budget` tokens instead of letting the controller choose. */
  adaptiveBudget?: boolean;
  /** Draft token trees (branching where the drafter is unsure) instead of chains. */
  tree?: boolean;
}

export interface GenerateStats {
  promptTokens: number;
  reusedTokens: number; // prompt tokens whose KV came from the previous request
  promptMs: number;
  decodeMs: number;
  generated: number;
  targetPasses: number;
  drafted: number;
  accepted: number;
  draftMs: number;
  verifyMs: number;
  aborted: boolean;
}

export interface NativeModel {
  info(): ModelInfo;
  tokenize(text: string, addSpecial: boolean, parseSpecial: boolean): number[];
  detokenize(ids: number[], renderSpecial: boolean): string;
  free(): void;
}

export interface SessionOptions {
  nCtx: number;
  threads: number;
  draft?: NativeModel;
}

/** A generation in flight: `done` settles when it ends; `abort()` stops it within a pass. */
export interface GenerationHandle {
  done: Promise<GenerateStats>;
  abort(): void;
}

export interface NativeSession {
  /**
   * Streams each token id with the text it completes (whole UTF-8 characters only). A last
   * call with id -1 may carry bytes held back at the end (an incomplete character).
   */
  generate(
    prompt: number[],
    params: GenerateParams,
    onToken: (id: number, text: string) => void,
  ): GenerationHandle;
  /** Logits of the last prompt position (after prefix reuse), for differential tests. */
  lastLogits(prompt: number[]): Promise<Float32Array>;
  free(): void;
}

export interface NativeAddon {
  /** vocabOnly loads just the tokenizer (no weights): enough for tokenize/detokenize. */
  loadModel(path: string, options: { threads: number; vocabOnly?: boolean }): Promise<NativeModel>;
  createSession(model: NativeModel, options: SessionOptions): NativeSession;
  /** Writes a Q4_0 copy of a model (the self-draft, native/src/spec/self_draft.h). */
  writeLowerBitCopy(srcPath: string, dstPath: string): Promise<void>;
  /** CPU features the kernels dispatch on, and the instruction set chosen. */
  systemInfo(): { isa: string; physicalCores: number };
}
