// The one code path of an inline completion, shared by the language server and
// `leapfrog complete`: typed-ahead reuse → context window and extra chunks → FIM prompt →
// scheduled, abortable generation with streaming stop rules → post-processing.
import { IndentHealer, indentToHeal } from './indent-healing';
import { basename } from 'node:path';
import type { GenerateStats, GenerationHandle } from '../native/addon';
import type { ModelHost, LoadedEngine } from '../models/model-host';
import type { Scheduler } from '../scheduler/scheduler';
import { buildContextWindow, splitLines } from './context-window';
import { ExtraContextRing } from './extra-context';
import { buildFimPrompt, usesExtraChunks, type ExtraChunk } from './fim-template';
import { postprocess, type CompletionContext } from './postprocess';
import { StreamStopRules } from './stop-rules';
import { TypedAheadCache } from './typed-ahead';
import { fitBudgets, type CompletionOptions } from './completion-options';
import { lookupCorpus } from './lookup-corpus';
import { GENERATION_DEFAULTS } from '../protocol';
import {
  COMPLETION_OVERRIDES,
  buildGenerateParams,
  defaultGenerationSettings,
  mergeOverrides,
  type GenerationSettings,
} from '../generation/generation-config';

export interface CompletionRequest {
  uri: string;
  /** File name and repository name shown to repository-level templates. */
  path: string;
  repoName: string;
  text: string;
  line: number;
  character: number;
  maxTokens?: number;
}

export type CompletionResult =
  | { status: 'ok'; text: string; source: 'model' | 'typed-ahead'; stats: Record<string, number> }
  | { status: 'cancelled' | 'superseded' };

export interface CompletionCall {
  result: Promise<CompletionResult>;
  cancel(): void;
}

/** A position outside the document (the server turns it into an InvalidParams error). */
export class PositionError extends Error {}

export class CompletionService {
  readonly ring = new ExtraContextRing();
  readonly typedAhead = new TypedAheadCache();
  private readonly tokenCounts = new WeakMap<LoadedEngine, Map<string, number>>();
  private readonly chunkTokens = new WeakMap<LoadedEngine, Map<string, number[]>>();
  counters = { completions: 0, typedAheadHits: 0 };

  constructor(
    private readonly host: ModelHost,
    private readonly scheduler: Scheduler,
    private readonly opts: CompletionOptions,
    private readonly onFinished: (stats: GenerateStats) => void = () => {},
    /** The user's settings, read at each request (a change applies to the next one). */
    private readonly settings: () => GenerationSettings = defaultGenerationSettings,
  ) {}

  complete(req: CompletionRequest): CompletionCall {
    let cancelled = false;
    let cancelTicket: (() => void) | undefined;
    const result = this.run(
      req,
      () => cancelled,
      (c) => (cancelTicket = c),
    );
    return {
      result,
      cancel: () => {
        cancelled = true;
        cancelTicket?.();
      },
    };
  }

  private async run(
    req: CompletionRequest,
    isCancelled: () => boolean,
    setCancel: (cancel: () => void) => void,
  ): Promise<CompletionResult> {
    const started = Date.now();
    const lines = splitLines(req.text);
    checkPosition(lines, req.line, req.character);
    const offset = offsetOf(req.text, req.line, req.character);
    const docPrefix = req.text.slice(0, offset);
    const docSuffix = req.text.slice(offset);

    const reused = this.typedAhead.lookup(req.uri, docPrefix, docSuffix);
    if (reused !== undefined) {
      this.counters.typedAheadHits++;
      this.typedAhead.remember(req.uri, docPrefix, docSuffix, reused);
      return {
        status: 'ok',
        text: reused,
        source: 'typed-ahead',
        stats: { typed_ahead: 1, total_ms: Date.now() - started },
      };
    }

    const engine = await this.host.whenReady();
    if (isCancelled()) return { status: 'cancelled' };
    const count = this.tokenCounter(engine);
    const maxTokens = Math.max(1, Math.min(req.maxTokens ?? this.opts.maxTokens, engine.nCtx / 2));
    const budgets = fitBudgets(this.opts, engine.nCtx, maxTokens);

    this.ring.noteActivity(req.uri, req.path, lines, req.line);
    this.ring.rotate(req.uri, count);
    const window = buildContextWindow(
      lines,
      req.line,
      req.character,
      {
        prefixTokens: budgets.prefixTokens,
        suffixTokens: budgets.suffixTokens,
        anchorLines: this.opts.anchorLines,
      },
      count,
    );
    const extra: ExtraChunk[] = usesExtraChunks(engine.fim)
      ? this.ring.chunksFor(req.uri, budgets.extraTokens)
      : [];
    // The lookup drafter searches every ring chunk, whether or not the template shows them
    // to the model: they cost no context, and code nearby often repeats them.
    const corpus = lookupCorpus(
      this.ring.chunksFor(req.uri, Infinity),
      this.chunkTokenizer(engine),
    );
    const tokenize = (t: string) => engine.target.tokenize(t, false, false);
    const indent = indentToHeal(window.linePrefix);
    const parts = {
      repoName: req.repoName,
      filePath: req.path,
      prefix: window.prefix.slice(0, window.prefix.length - indent.length),
      suffix: window.suffix,
      extra,
    };
    let prompt = buildFimPrompt(engine.fim, parts, tokenize);
    if (prompt.length + maxTokens > engine.nCtx && extra.length) {
      prompt = buildFimPrompt(engine.fim, { ...parts, extra: [] }, tokenize);
    }
    if (prompt.length + maxTokens > engine.nCtx) {
      // Per-line counts can undercount the joined text a little; keep the newest tokens.
      prompt = prompt.slice(prompt.length - (engine.nCtx - maxTokens));
    }

    const ctx: CompletionContext = {
      prefix: window.prefix,
      linePrefix: window.linePrefix,
      lineSuffix: window.lineSuffix,
      linesBelow: window.linesBelow,
      specialTexts: engine.fim.specialTexts,
    };
    const stopIds = new Set(engine.fim.stopIds);
    const params = buildGenerateParams(
      GENERATION_DEFAULTS,
      this.settings(),
      mergeOverrides(COMPLETION_OVERRIDES, { maxTokens, corpus }),
    );
    let raw = '';
    let healer = new IndentHealer(indent);
    const ticket = this.scheduler.submit({
      kind: 'completion',
      key: req.uri,
      start: () => {
        raw = '';
        healer = new IndentHealer(indent);
        const heal = healer;
        let stopped = false;
        const rules = new StreamStopRules(ctx, this.opts, Date.now());
        const handle: GenerationHandle = engine.completionSession.generate(
          prompt,
          params,
          (id, piece) => {
            if (stopped) return; // tokens already in flight when we asked the engine to stop
            if (stopIds.has(id)) stopped = true;
            else {
              const healed = heal.push(piece);
              if (healed !== undefined) {
                raw = healed;
                stopped = rules.shouldStop(raw, Date.now());
              } else stopped = heal.mismatch;
            }
            if (stopped) handle?.abort();
          },
        );
        if (stopped) handle.abort(); // stopped by a token delivered before generate() returned
        return handle;
      },
    });
    setCancel(ticket.cancel);
    if (isCancelled()) ticket.cancel();
    const outcome = await ticket.outcome;
    if (outcome.status === 'failed') throw outcome.error;
    if (outcome.status !== 'finished') return { status: outcome.status };
    this.counters.completions++;
    this.onFinished(outcome.stats);
    const text = healer.mismatch ? '' : postprocess(raw, ctx);
    this.typedAhead.remember(req.uri, docPrefix, docSuffix, text);
    return {
      status: 'ok',
      text,
      source: 'model',
      stats: { ...statsRecord(outcome.stats), total_ms: Date.now() - started, typed_ahead: 0 },
    };
  }

  /** Token ids of a ring chunk, cached per model (the ring changes slowly). */
  private chunkTokenizer(engine: LoadedEngine): (text: string) => number[] {
    return memoized(this.chunkTokens, engine, 64, (text) =>
      engine.target.tokenize(text, false, false),
    );
  }

  /** Token count of one line, cached per model (most lines do not change between requests). */
  private tokenCounter(engine: LoadedEngine): (text: string) => number {
    return memoized(this.tokenCounts, engine, 50_000, (text) =>
      text ? engine.target.tokenize(text, false, false).length : 0,
    );
  }
}

/** `compute` cached per model and text; the cache starts over when it outgrows `limit`. */
function memoized<T>(
  store: WeakMap<LoadedEngine, Map<string, T>>,
  engine: LoadedEngine,
  limit: number,
  compute: (text: string) => T,
): (text: string) => T {
  let cache = store.get(engine);
  if (!cache) store.set(engine, (cache = new Map()));
  const map = cache;
  return (text: string) => {
    let v = map.get(text);
    if (v === undefined) {
      v = compute(text);
      if (map.size > limit) map.clear();
      map.set(text, v);
    }
    return v;
  };
}

export function statsRecord(s: GenerateStats): Record<string, number> {
  const tps = s.decodeMs > 0 ? (s.generated * 1000) / s.decodeMs : 0;
  return {
    prompt_tokens: s.promptTokens,
    reused_tokens: s.reusedTokens,
    prompt_ms: s.promptMs,
    decode_ms: s.decodeMs,
    generated: s.generated,
    target_passes: s.targetPasses,
    drafted: s.drafted,
    accepted: s.accepted,
    max_pass_tokens: s.maxPassTokens,
    tokens_per_second: Math.round(tps * 100) / 100,
  };
}

export function checkPosition(lines: readonly string[], line: number, character: number): void {
  if (!Number.isInteger(line) || !Number.isInteger(character) || line < 0 || character < 0) {
    throw new PositionError(`invalid position ${line}:${character}`);
  }
  if (line >= lines.length) {
    throw new PositionError(
      `line ${line} is out of range (the document has ${lines.length} lines)`,
    );
  }
  if (character > lines[line].length) {
    throw new PositionError(
      `character ${character} is out of range (line ${line} has ${lines[line].length} characters)`,
    );
  }
}

/** Offset of a valid (line, character) in `text`, counting \r\n as one line break. */
function offsetOf(text: string, line: number, character: number): number {
  let offset = 0;
  for (let l = 0; l < line; l++) {
    let i = offset;
    while (i < text.length && text[i] !== '\n' && text[i] !== '\r') i++;
    offset = text[i] === '\r' && text[i + 1] === '\n' ? i + 2 : i + 1;
  }
  return offset + character;
}

/**
 * The file name repository-level templates see. The base name, in the server and in
 * `leapfrog complete` alike (the CLI does not know the workspace root, and both must build
 * the same prompt).
 */
export function promptPath(fsPathOrUri: string): string {
  return basename(fsPathOrUri);
}
