// The one code path of an inline completion, shared by the language server and
// `leapfrog complete`: typed-ahead reuse → context window and extra chunks → FIM prompt →
// scheduled, abortable generation with streaming stop rules → post-processing.
import { IndentHealer, indentToHeal } from './indent-healing';
import { basename } from 'node:path';
import type { GenerateParams, GenerateStats, GenerationHandle } from '../native/addon';
import type { ModelHost, LoadedEngine } from '../models/model-host';
import type { Scheduler } from '../scheduler/scheduler';
import { buildContextWindow, splitLines } from './context-window';
import { ExtraContextRing } from './extra-context';
import { buildFimPrompt, usesExtraChunks, type ExtraChunk, type FimParts } from './fim-template';
import { isSingleLine, postprocess, type CompletionContext } from './postprocess';
import { StreamStopRules } from './stop-rules';
import { TypedAheadCache } from './typed-ahead';
import { fitBudgets, type CompletionOptions } from './completion-options';
import { lookupCorpus } from './lookup-corpus';
import { Deadline } from './deadline';
import { PrefillRate } from './prefill-rate';
import { GENERATION_DEFAULTS } from '../protocol';
import {
  COMPLETION_OVERRIDES,
  buildGenerateParams,
  defaultGenerationSettings,
  mergeOverrides,
  type GenerationSettings,
} from '../generation/generation-config';
import type { RemoteEndpoint } from '../remote/endpoint';
import { remoteCompletionTarget } from '../remote/remote-target';

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
  | {
      status: 'ok';
      text: string;
      source: 'model' | 'typed-ahead';
      stats: Record<string, number>;
      /**
       * Answered before the generation ended (its first line, or at the deadline); the rest
       * is being generated into the typed-ahead cache.
       */
      partial?: boolean;
      /**
       * With `partial`: settles when the background generation has ended, true when it left
       * a longer suggestion for this cursor in the typed-ahead cache than the one answered.
       */
      grown?: Promise<boolean>;
    }
  | { status: 'cancelled' | 'superseded' };

export interface CompletionCall {
  result: Promise<CompletionResult>;
  cancel(): void;
}

/** A prefetch in flight: its cursor's text, its result, and a way to give it a deadline. */
interface Prefetch {
  prefix: string;
  suffix: string;
  result: Promise<CompletionResult>;
  deadline: Deadline;
}

/** A position outside the document (the server turns it into an InvalidParams error). */
export class PositionError extends Error {}

/** A generation in flight; `failed`: it ended without an answer (an endpoint that failed). */
export type CompletionHandle = GenerationHandle & { readonly failed?: boolean };

/**
 * What a completion runs on: the local model, or a team's server (engine/remote/). The
 * context building, stop rules and post-processing around it are the same for both.
 */
export interface CompletionTarget {
  nCtx: number;
  countTokens(text: string): number;
  /** Whether chunks of other files reach the prompt. */
  extraChunks: boolean;
  /** Texts of special tokens that must never reach ghost text. */
  specialTexts: readonly string[];
  /** The local model's measured prompt speed (sizes the suffix); none for an endpoint. */
  prefillRate?: PrefillRate;
  /**
   * Builds the request for `parts`; the function returned starts it (the scheduler calls
   * it), passing each piece of text to `onPiece` and null for a token that ends the
   * completion. `ringChunks`: every chunk of other files, for the lookup drafter.
   */
  prepare(
    parts: FimParts,
    params: GenerateParams,
    ringChunks: readonly ExtraChunk[],
    singleLine: boolean,
  ): (onPiece: (piece: string | null) => void) => CompletionHandle;
}

export class CompletionService {
  readonly ring = new ExtraContextRing();
  readonly typedAhead = new TypedAheadCache();
  private readonly tokenCounts = new WeakMap<LoadedEngine, Map<string, number>>();
  private readonly chunkTokens = new WeakMap<LoadedEngine, Map<string, number[]>>();
  private readonly prefillRates = new WeakMap<LoadedEngine, PrefillRate>();
  counters = { completions: 0, typedAheadHits: 0, answeredAtDeadline: 0, prefetches: 0 };
  /** The request deadline in force (the setting leapfrog.completion.deadlineMs). */
  deadlineMs: number;
  /** Prefetches in flight, by document: a request for the same text and cursor joins one. */
  private readonly prefetching = new Map<string, Prefetch>();
  /** The cursor of the latest request per document (a prefetch there would supersede it). */
  private readonly lastAsked = new Map<string, { prefix: string; suffix: string }>();
  /** The first line of each document's last prompt window (kept while it fits: KV reuse). */
  private readonly windowStarts = new Map<string, number>();
  /** Background generations behind partial answers, by document (typed-ahead grows there). */
  private readonly growing = new Map<
    string,
    { prefix: string; suffix: string; done: Promise<void> }
  >();

  constructor(
    private readonly host: ModelHost,
    private readonly scheduler: Scheduler,
    private readonly opts: CompletionOptions,
    private readonly onFinished: (stats: GenerateStats) => void = () => {},
    /** The user's settings, read at each request (a change applies to the next one). */
    private readonly settings: () => GenerationSettings = defaultGenerationSettings,
    /** The endpoint completions go to instead of the local model, while one is set. */
    private readonly remote: () => RemoteEndpoint | undefined = () => undefined,
  ) {
    this.deadlineMs = opts.deadlineMs;
  }

  /**
   * Computes the suggestion for a cursor nobody is waiting at yet (a file just opened or
   * focused, the position after an accepted suggestion), so that the model has read the
   * file (its KV cache holds the prompt) and the typed-ahead cache has the answer when the
   * user gets there. No deadline; superseded like any completion by a request for another
   * cursor in the same document, joined by one for the same cursor.
   */
  prefetch(req: CompletionRequest): CompletionCall {
    try {
      checkPosition(splitLines(req.text), req.line, req.character);
    } catch (err) {
      return { result: Promise.reject(err as Error), cancel: () => {} };
    }
    const { prefix, suffix } = splitAtCursor(req);
    const last = this.lastAsked.get(req.uri);
    if (last && last.prefix === prefix && last.suffix === suffix) {
      // The user's own request for this cursor is answered or under way: nothing to add.
      return { result: Promise.resolve({ status: 'cancelled' }), cancel: () => {} };
    }
    const deadline = new Deadline();
    const call = this.start(req, deadline, false);
    const entry: Prefetch = { prefix, suffix, result: call.result, deadline };
    this.prefetching.set(req.uri, entry);
    this.counters.prefetches++;
    void call.result
      .catch(() => undefined)
      .finally(() => {
        if (this.prefetching.get(req.uri) === entry) this.prefetching.delete(req.uri);
      });
    return call;
  }

  /** A document was closed: what is remembered of it goes. */
  forgetDocument(uri: string): void {
    this.typedAhead.forget(uri);
    this.lastAsked.delete(uri);
    this.ring.forget(uri);
    this.growing.delete(uri);
    this.windowStarts.delete(uri);
  }

  complete(req: CompletionRequest): CompletionCall {
    const deadline = new Deadline();
    if (this.deadlineMs > 0) deadline.arm(this.deadlineMs);
    const call = this.start(req, deadline, true);
    if (this.deadlineMs > 0 && this.opts.acceptAhead) {
      void call.result.then((r) => this.acceptAhead(req, r)).catch(() => undefined);
    }
    return call;
  }

  /**
   * Accept-ahead: once the suggestion shown for `req` is whole (at once, or when a partial
   * answer has grown), the suggestion for the cursor after accepting it is computed in the
   * background, as a prefetch there — while the user reads. An accept (Tab) is then answered
   * from the typed-ahead memory instead of reading the accepted text into the model first
   * (with a fill-in-the-middle prompt the accepted text moves before the suffix, so the
   * generation's own KV entries cannot be reused: ~270 tokens took 1.5–2.6 s on a 1.5B model
   * in the editor). Any request for the document supersedes it, like every prefetch. Not
   * for a team's server: it would double the requests a shared server gets.
   */
  private acceptAhead(req: CompletionRequest, r: CompletionResult): void {
    if (r.status !== 'ok' || !r.text || this.remote()) return;
    const { prefix, suffix } = splitAtCursor(req);
    const shown = r.partial
      ? (r.grown ?? Promise.resolve(false)).then(
          () => this.typedAhead.lookup(req.uri, prefix, suffix) ?? r.text,
        )
      : Promise.resolve(r.text);
    void shown.then((text) => {
      // Only while the user is still at this cursor (no newer request for the document).
      const last = this.lastAsked.get(req.uri);
      if (!last || last.prefix !== prefix || last.suffix !== suffix) return;
      const accepted = prefix + text;
      const lines = splitLines(accepted);
      const call = this.prefetch({
        ...req,
        text: accepted + suffix,
        line: lines.length - 1,
        character: lines[lines.length - 1]!.length,
      });
      call.result.catch(() => undefined);
    });
  }

  /** `asked`: the user's own request (a prefetch is not). */
  private start(req: CompletionRequest, deadline: Deadline, asked: boolean): CompletionCall {
    let cancelled = false;
    let cancelTicket: (() => void) | undefined;
    const result = this.run(req, deadline, {
      asked,
      isCancelled: () => cancelled,
      setCancel: (c) => (cancelTicket = c),
    });
    void result.catch(() => undefined).finally(() => deadline.stop());
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
    deadline: Deadline,
    hooks: {
      asked: boolean;
      isCancelled: () => boolean;
      setCancel: (cancel: () => void) => void;
    },
  ): Promise<CompletionResult> {
    const { isCancelled, setCancel } = hooks;
    const started = Date.now();
    const lines = splitLines(req.text);
    checkPosition(lines, req.line, req.character);
    const { prefix: docPrefix, suffix: docSuffix } = splitAtCursor(req);
    if (hooks.asked) this.lastAsked.set(req.uri, { prefix: docPrefix, suffix: docSuffix });

    const reused = this.typedAhead.lookup(req.uri, docPrefix, docSuffix);
    if (reused !== undefined) {
      this.counters.typedAheadHits++;
      // The entry that answered stays as it is (not copied to this cursor): it answers every
      // cursor typed into it, and a generation still behind it goes on extending it.
      // Still growing behind an earlier partial answer: this one is partial too.
      const g = this.growing.get(req.uri);
      const growing = g && g.suffix === docSuffix && docPrefix.startsWith(g.prefix);
      return {
        status: 'ok',
        text: reused,
        source: 'typed-ahead',
        ...(growing
          ? {
              partial: true,
              grown: this.grownPast(req.uri, docPrefix, docSuffix, reused, g.done),
            }
          : {}),
        stats: { typed_ahead: 1, total_ms: Date.now() - started },
      };
    }

    const pending = this.prefetching.get(req.uri);
    if (pending && pending.prefix === docPrefix && pending.suffix === docSuffix) {
      // The suggestion for this very cursor is being prefetched: it answers this request,
      // under this request's deadline, rather than a new generation that starts over.
      if (this.deadlineMs > 0)
        pending.deadline.arm(Math.max(0, this.deadlineMs - (Date.now() - started)));
      const joined = await pending.result.catch(() => undefined);
      if (isCancelled()) return { status: 'cancelled' };
      if (joined?.status === 'ok') {
        return { ...joined, stats: { ...joined.stats, joined_prefetch: 1 } };
      }
    }

    const target = await this.target();
    if (isCancelled()) return { status: 'cancelled' };
    // An endpoint that is down: no ghost text and no error (its status says why).
    if (!target) return downResult(started);
    const count = (text: string) => target.countTokens(text);
    const maxTokens = Math.max(1, Math.min(req.maxTokens ?? this.opts.maxTokens, target.nCtx / 2));
    const budgets = fitBudgets(this.opts, target.nCtx, maxTokens);
    const suffixTokens =
      target.prefillRate?.suffixTokens(
        budgets.suffixTokens,
        deadline.armed ? this.deadlineMs : 0,
      ) ?? budgets.suffixTokens;

    this.ring.noteActivity(req.uri, req.path, lines, req.line);
    this.ring.rotate(req.uri, count);
    const window = buildContextWindow(
      lines,
      req.line,
      req.character,
      {
        prefixTokens: budgets.prefixTokens,
        suffixTokens,
        anchorLines: this.opts.anchorLines,
      },
      count,
      this.windowStarts.get(req.uri),
    );
    this.windowStarts.set(req.uri, window.prefixStartLine);
    const extra: ExtraChunk[] = target.extraChunks
      ? this.ring.chunksFor(req.uri, budgets.extraTokens)
      : [];
    const indent = indentToHeal(window.linePrefix);
    const parts = {
      repoName: req.repoName,
      filePath: req.path,
      prefix: window.prefix.slice(0, window.prefix.length - indent.length),
      suffix: window.suffix,
      extra,
    };
    const ctx: CompletionContext = {
      prefix: window.prefix,
      linePrefix: window.linePrefix,
      lineSuffix: window.lineSuffix,
      linesBelow: window.linesBelow,
      specialTexts: target.specialTexts,
    };
    const params = buildGenerateParams(
      GENERATION_DEFAULTS,
      this.settings(),
      mergeOverrides(COMPLETION_OVERRIDES, { maxTokens }),
    );
    const begin = target.prepare(
      parts,
      params,
      this.ring.chunksFor(req.uri, Infinity),
      isSingleLine(ctx),
    );
    let raw = '';
    let healer = new IndentHealer(indent);
    let handle: CompletionHandle | undefined;
    // After an answer at the deadline the generation goes on, and every piece extends the
    // typed-ahead entry of that answer.
    let answer: ((text: string) => void) | undefined;
    const answered = new Promise<string>((r) => (answer = r));
    let answeredText: string | undefined;
    // With a deadline in force, the first complete line is answered at once (the rest
    // follows into the typed-ahead cache); at the deadline, whatever post-processing keeps.
    const firstLineFirst = this.opts.firstLineFirst;
    const answerIfDue = () => {
      if (answeredText !== undefined || healer.mismatch) return;
      let text: string;
      if (deadline.passed) text = postprocess(raw, ctx);
      else if (firstLineFirst && deadline.armed && raw.includes('\n')) {
        text = postprocess(raw.slice(0, raw.lastIndexOf('\n')), ctx);
      } else return;
      if (!text) return;
      answeredText = text;
      this.typedAhead.remember(req.uri, docPrefix, docSuffix, text);
      answer?.(text);
    };
    deadline.whenPassed(answerIfDue);
    const ticket = this.scheduler.submit({
      kind: 'completion',
      key: req.uri,
      start: () => {
        raw = '';
        healer = new IndentHealer(indent);
        const heal = healer;
        let stopped = false;
        const rules = new StreamStopRules(ctx, this.opts, Date.now());
        const h: CompletionHandle = begin((piece) => {
          if (stopped) return; // tokens already in flight when we asked the engine to stop
          if (piece === null) stopped = true;
          else {
            const healed = heal.push(piece);
            if (healed !== undefined) {
              raw = healed;
              const now = Date.now();
              stopped = rules.shouldStop(raw, now);
              if (answeredText === undefined) answerIfDue();
              else {
                this.typedAhead.extend(req.uri, docPrefix, docSuffix, postprocess(raw, ctx));
                stopped ||= now - started > this.opts.backgroundMs;
              }
            } else stopped = heal.mismatch;
          }
          if (stopped) h?.abort();
        });
        handle = h;
        if (stopped) h.abort(); // stopped by a token delivered before generate() returned
        return h;
      },
    });
    setCancel(ticket.cancel);
    if (isCancelled()) ticket.cancel();
    const first = await Promise.race([
      ticket.outcome,
      answered.then((text) => ({ status: 'answered' as const, text })),
    ]);
    if (first.status === 'answered') {
      this.counters.answeredAtDeadline++;
      const done = ticket.outcome.then(
        (outcome) => {
          // The request is answered: only the typed-ahead cache and the figures are left.
          if (outcome.status !== 'finished' || handle?.failed) return;
          this.counters.completions++;
          target.prefillRate?.note(outcome.stats);
          this.onFinished(outcome.stats);
          if (!healer.mismatch) {
            this.typedAhead.extend(req.uri, docPrefix, docSuffix, postprocess(raw, ctx));
          }
        },
        () => undefined,
      );
      const entry = { prefix: docPrefix, suffix: docSuffix, done };
      this.growing.set(req.uri, entry);
      void done.then(() => {
        if (this.growing.get(req.uri) === entry) this.growing.delete(req.uri);
      });
      return {
        status: 'ok',
        text: first.text,
        source: 'model',
        partial: true,
        grown: this.grownPast(req.uri, docPrefix, docSuffix, first.text, done),
        stats: { partial: 1, total_ms: Date.now() - started },
      };
    }
    deadline.stop();
    const outcome = first;
    if (outcome.status === 'failed') throw outcome.error;
    if (outcome.status !== 'finished') return { status: outcome.status };
    if (handle?.failed) return downResult(started);
    this.counters.completions++;
    target.prefillRate?.note(outcome.stats);
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

  /**
   * Once `done` (a background generation) has ended: whether the typed-ahead memory now
   * holds more for this cursor than `answered`.
   */
  private grownPast(
    uri: string,
    prefix: string,
    suffix: string,
    answered: string,
    done: Promise<void>,
  ): Promise<boolean> {
    return done.then(() => {
      const now = this.typedAhead.lookup(uri, prefix, suffix);
      return now !== undefined && now.length > answered.length && now.startsWith(answered);
    });
  }

  /** The endpoint's target while one is set (undefined while it is down), else the model's. */
  private async target(): Promise<CompletionTarget | undefined> {
    const remote = this.remote();
    if (remote) return remoteCompletionTarget(remote);
    return this.localTarget(await this.host.whenReady());
  }

  private localTarget(engine: LoadedEngine): CompletionTarget {
    const tokenize = (t: string) => engine.target.tokenize(t, false, false);
    const stopIds = new Set(engine.fim.stopIds);
    return {
      nCtx: engine.nCtx,
      countTokens: this.tokenCounter(engine),
      extraChunks: usesExtraChunks(engine.fim),
      specialTexts: engine.fim.specialTexts,
      prefillRate: this.prefillRateOf(engine),
      prepare: (parts, params, ringChunks) => {
        // The lookup drafter searches every ring chunk, whether or not the template shows
        // them to the model: they cost no context, and code nearby often repeats them.
        const corpus = lookupCorpus(ringChunks, this.chunkTokenizer(engine));
        const { maxTokens } = params;
        let prompt = buildFimPrompt(engine.fim, parts, tokenize);
        // Plain continuation (no FIM tokens) at the start of an empty file has no text to
        // continue, and the engine refuses an empty prompt: start from the model's BOS, as a
        // new text starts.
        if (prompt.length === 0 && engine.info.bos >= 0) prompt = [engine.info.bos];
        if (prompt.length + maxTokens > engine.nCtx && parts.extra.length) {
          prompt = buildFimPrompt(engine.fim, { ...parts, extra: [] }, tokenize);
        }
        if (prompt.length + maxTokens > engine.nCtx) {
          // Per-line counts can undercount the joined text a little; keep the newest tokens.
          prompt = prompt.slice(prompt.length - (engine.nCtx - maxTokens));
        }
        const withCorpus = corpus.length > 0 ? { ...params, corpus } : params;
        return (onPiece) =>
          engine.completionSession.generate(prompt, withCorpus, (id, piece) =>
            onPiece(stopIds.has(id) ? null : piece),
          );
      },
    };
  }

  private prefillRateOf(engine: LoadedEngine): PrefillRate {
    let r = this.prefillRates.get(engine);
    if (!r) this.prefillRates.set(engine, (r = new PrefillRate()));
    return r;
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

/** No ghost text, because the endpoint is down or failed (its status says why). */
function downResult(started: number): CompletionResult {
  return {
    status: 'ok',
    text: '',
    source: 'model',
    stats: { endpoint_down: 1, typed_ahead: 0, total_ms: Date.now() - started },
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

/** The document's text before and after the request's cursor (a position checked first). */
function splitAtCursor(req: CompletionRequest): { prefix: string; suffix: string } {
  const offset = offsetOf(req.text, req.line, req.character);
  return { prefix: req.text.slice(0, offset), suffix: req.text.slice(offset) };
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
