// The TypeScript view of the native addon (native/src/addon/). Everything the engine does
// with models goes through these types; long work returns promises and runs on engine
// threads, never on Node's event loop.
import type { BackendKind, SamplingConfig, SpeculationConfig, SpeculationMode } from '../protocol';

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
  /** Where the kernels run: "cpu:avx512", "cuda:NVIDIA H200" ("" when vocabOnly). */
  backend: string;
  /**
   * GGUF `leapfrog.prompt.fim` (absent = true): false when the model has FIM tokens in its
   * vocabulary but did not learn to use them, so completions prompt it prefix-only.
   */
  fimTrained: boolean;
}

// The configuration's parts are typed once, in engine/protocol.ts (where they cross the wire);
// the addon takes the same shapes (native/src/engine/generation_config.h mirrors them).
export type SamplingParams = SamplingConfig;
export type SpecMode = SpeculationMode;
export type { BackendKind };
/** How drafts are made and verified (native/src/engine/generation_config.h mirrors it). */
export type SpeculationParams = SpeculationConfig;

/** One request's generation configuration, as the addon takes it. */
export interface GenerateParams {
  maxTokens: number;
  stopAtEog: boolean;
  sampling: SamplingParams;
  speculation: SpeculationParams;
  /**
   * Token ids of other text the lookup drafter may copy from (the extra-context chunks of
   * other open files), searched after the prompt and the output; -1 separates chunks.
   */
  corpus?: number[];
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
  /** The most tokens one target pass verified in this generation (1 + its longest draft). */
  maxPassTokens: number;
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
  loadModel(
    path: string,
    options: { threads: number; vocabOnly?: boolean; backend?: BackendKind },
  ): Promise<NativeModel>;
  /** The native defaults of GenerateParams (the same table as engine/protocol.ts's). */
  defaultGenerateParams(): GenerateParams;
  createSession(model: NativeModel, options: SessionOptions): NativeSession;
  /** Writes a Q4_0 copy of a model (the self-draft, native/src/spec/self_draft.h). */
  writeLowerBitCopy(srcPath: string, dstPath: string): Promise<void>;
  /** CPU features the kernels dispatch on, and the instruction set chosen. */
  systemInfo(): {
    isa: string;
    physicalCores: number;
    /** Loaded models no longer read their file (native/src/gguf/detach.cpp); absent in builds
     * from before that, which a file truncated under them crashes with SIGBUS. */
    detachesModelFiles?: boolean;
  };
}
