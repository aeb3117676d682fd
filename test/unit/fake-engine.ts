// A stand-in for the native addon, for unit tests of the scheduler and the completion and
// chat paths ONLY (the protocol suite runs the real addon). Tokens are characters (id =
// code point + 1000); special tokens have small ids. Each session replies with a scripted
// text, one token per timer tick, and honours abort() between tokens like the engine does
// between forward passes.
import { defaultGenerateParams } from '../../engine/generation/generation-config';
import type {
  BackendKind,
  GenerateParams,
  GenerateStats,
  GenerationHandle,
  ModelInfo,
  NativeAddon,
  NativeModel,
  NativeSession,
} from '../../engine/native/addon';

export const SPECIAL: Record<number, string> = {
  1: '<|endoftext|>',
  2: '<|fim_prefix|>',
  3: '<|fim_suffix|>',
  4: '<|fim_middle|>',
  5: '<|repo_name|>',
  6: '<|file_sep|>',
  7: '<|im_end|>',
};

export function fakeInfo(over: Partial<ModelInfo> = {}): ModelInfo {
  return {
    path: '/fake/model.gguf',
    name: 'fake',
    architecture: 'qwen2',
    nVocab: 200000,
    nCtxTrain: 4096,
    nParams: 1,
    fileBytes: 1,
    bos: -1,
    eos: 1,
    addBos: false,
    eogIds: [1, 7],
    fim: { prefix: 2, suffix: 3, middle: 4, pad: -1, repo: 5, fileSep: 6 },
    chatTemplate: '',
    tokenizerModel: 'gpt2',
    vocabOnly: false,
    backend: 'cpu:fake',
    fimTrained: true,
    ...over,
  };
}

export class FakeModel implements NativeModel {
  freed = false;
  constructor(private readonly modelInfo: ModelInfo = fakeInfo()) {}
  info(): ModelInfo {
    return this.modelInfo;
  }
  tokenize(text: string): number[] {
    return [...text].map((c) => c.codePointAt(0)! + 1000);
  }
  detokenize(ids: number[]): string {
    return ids.map((id) => SPECIAL[id] ?? String.fromCodePoint(id - 1000)).join('');
  }
  free(): void {
    this.freed = true;
  }
}

export interface GenerateCall {
  prompt: number[];
  params: GenerateParams;
  aborted: boolean;
  finished: boolean;
}

export class FakeSession implements NativeSession {
  calls: GenerateCall[] = [];
  freed = false;
  /** What the next generation says (a function of the prompt); ids are characters. */
  reply: (prompt: number[]) => (number | string)[] = () => ['x'];
  tickMs = 1;

  generate(
    prompt: number[],
    params: GenerateParams,
    onToken: (id: number, text: string) => void,
  ): GenerationHandle {
    const call: GenerateCall = { prompt, params, aborted: false, finished: false };
    this.calls.push(call);
    const pieces: (number | string)[] = this.reply(prompt).flatMap((p): (number | string)[] =>
      typeof p === 'number' ? [p] : [...p],
    );
    let i = 0;
    let generated = 0;
    const done = new Promise<GenerateStats>((resolve) => {
      const step = () => {
        if (call.aborted || i >= pieces.length || generated >= params.maxTokens) {
          call.finished = true;
          resolve(stats(prompt.length, generated, call.aborted));
          return;
        }
        const p = pieces[i++];
        generated++;
        if (typeof p === 'number') {
          onToken(p, SPECIAL[p] ?? '');
          if (params.stopAtEog && (p === 1 || p === 7)) {
            call.finished = true;
            resolve(stats(prompt.length, generated, false));
            return;
          }
        } else onToken(p.codePointAt(0)! + 1000, p);
        setTimeout(step, this.tickMs);
      };
      setTimeout(step, this.tickMs);
    });
    return { done, abort: () => (call.aborted = true) };
  }
  lastLogits(): Promise<Float32Array> {
    return Promise.resolve(new Float32Array(0));
  }
  free(): void {
    this.freed = true;
  }
}

function stats(promptTokens: number, generated: number, aborted: boolean): GenerateStats {
  return {
    promptTokens,
    reusedTokens: 0,
    promptMs: 1,
    decodeMs: 10,
    generated,
    targetPasses: generated,
    drafted: 0,
    accepted: 0,
    draftMs: 0,
    verifyMs: 0,
    maxPassTokens: generated > 0 ? 1 : 0,
    aborted,
  };
}

export interface LoadCall {
  path: string;
  threads: number;
  backend?: BackendKind;
}

export class FakeAddon implements NativeAddon {
  sessions: FakeSession[] = [];
  loads: LoadCall[] = [];
  constructor(private readonly info: ModelInfo = fakeInfo()) {}
  loadModel(
    path: string,
    options: { threads: number; backend?: BackendKind },
  ): Promise<NativeModel> {
    this.loads.push({ path, threads: options.threads, backend: options.backend });
    if (path.includes('corrupt')) return Promise.reject(new Error('bad tensor data'));
    return Promise.resolve(new FakeModel({ ...this.info, path }));
  }
  defaultGenerateParams(): GenerateParams {
    return defaultGenerateParams();
  }
  createSession(): NativeSession {
    const s = new FakeSession();
    this.sessions.push(s);
    return s;
  }
  systemInfo() {
    return { isa: 'fake', physicalCores: 2 };
  }
  async writeLowerBitCopy(): Promise<void> {
    throw new Error('the fake engine writes no files');
  }
}
