// One engine, many requests. At most one native generation runs at a time (they would
// only fight over the same cores and memory bandwidth). Completions go before chat: a
// completion arriving while a chat turn generates aborts that turn, which is put back at
// the head of the chat queue and restarted (from its prompt plus what it already
// produced, so the session's KV-prefix reuse makes the restart cheap). A new completion
// for a document supersedes any older one for the same document, queued or running.
// While the user types (completions keep arriving), chat waits: it starts or resumes only
// once `typingHoldMs` have passed since the last completion was asked for — a chat turn
// restarted between two keystrokes would only be preempted again.
import type { GenerateStats, GenerationHandle } from '../native/addon';

export type JobKind = 'completion' | 'chat';

export interface Job {
  kind: JobKind;
  /** Document URI for completions, conversation id for chat. */
  key: string;
  /**
   * Starts the native work. Called again after a preemption: a restartable job (chat)
   * continues from where it stopped. A job may abort its own handle (stop rules); that
   * still counts as finished.
   */
  start(): GenerationHandle;
}

export type JobOutcome =
  | { status: 'finished'; stats: GenerateStats }
  | { status: 'cancelled' | 'superseded'; stats?: GenerateStats }
  | { status: 'failed'; error: Error };

export interface Ticket {
  outcome: Promise<JobOutcome>;
  /** Cancels the job: dropped when queued, aborted when running. Idempotent. */
  cancel(): void;
}

export interface SchedulerSnapshot {
  running: JobKind | null;
  queuedCompletions: number;
  queuedChats: number;
  counters: { superseded: number; cancelled: number; preemptions: number; finished: number };
}

interface Entry {
  job: Job;
  resolve(outcome: JobOutcome): void;
  settled: boolean;
  handle?: GenerationHandle;
  /** Why the scheduler aborted it, when it did; a restart is wanted for 'preempted'. */
  abortReason?: 'cancelled' | 'superseded' | 'preempted';
}

export class Scheduler {
  private running: Entry | undefined;
  private readonly completions: Entry[] = [];
  private readonly chats: Entry[] = [];
  private readonly counters = { superseded: 0, cancelled: 0, preemptions: 0, finished: 0 };
  private idleWaiters: (() => void)[] = [];
  private lastCompletionAt = -Infinity;
  private holdTimer: ReturnType<typeof setTimeout> | undefined;

  /**
   * `onChange`: whenever a job starts or ends (the server turns it into status
   * notifications). `onGeneration`: the figures of every native generation that ran, also
   * preempted, superseded and cancelled ones (the engine did that work).
   */
  constructor(
    private readonly onChange: () => void = () => {},
    private readonly onGeneration: (stats: GenerateStats) => void = () => {},
    private readonly typingHoldMs = 0,
  ) {}

  submit(job: Job): Ticket {
    let resolve!: (o: JobOutcome) => void;
    const outcome = new Promise<JobOutcome>((r) => (resolve = r));
    const entry: Entry = { job, resolve, settled: false };
    if (job.kind === 'completion') {
      this.lastCompletionAt = Date.now();
      this.supersedeCompletions(job.key);
      if (this.running?.job.kind === 'chat' && !this.running.abortReason) {
        this.running.abortReason = 'preempted';
        this.running.handle?.abort();
      }
      this.completions.push(entry);
    } else {
      this.chats.push(entry);
    }
    this.pump();
    return { outcome, cancel: () => this.cancel(entry) };
  }

  /** Cancels everything (model switch, shutdown). */
  cancelAll(): void {
    for (const e of [...this.completions, ...this.chats]) this.cancel(e);
    if (this.running) this.cancel(this.running);
  }

  /** Resolves once nothing runs and nothing waits. */
  idle(): Promise<void> {
    if (!this.running && this.completions.length === 0 && this.chats.length === 0) {
      return Promise.resolve();
    }
    return new Promise((r) => this.idleWaiters.push(r));
  }

  snapshot(): SchedulerSnapshot {
    return {
      running: this.running?.job.kind ?? null,
      queuedCompletions: this.completions.length,
      queuedChats: this.chats.length,
      counters: { ...this.counters },
    };
  }

  private supersedeCompletions(key: string): void {
    for (let i = this.completions.length - 1; i >= 0; i--) {
      if (this.completions[i].job.key === key) {
        const [old] = this.completions.splice(i, 1);
        this.counters.superseded++;
        this.settle(old, { status: 'superseded' });
      }
    }
    const r = this.running;
    if (r && r.job.kind === 'completion' && r.job.key === key && !r.abortReason) {
      r.abortReason = 'superseded';
      this.counters.superseded++;
      r.handle?.abort();
    }
  }

  private cancel(entry: Entry): void {
    if (entry.settled) return;
    for (const queue of [this.completions, this.chats]) {
      const i = queue.indexOf(entry);
      if (i >= 0) {
        queue.splice(i, 1);
        this.counters.cancelled++;
        this.settle(entry, { status: 'cancelled' });
        this.pump();
        return;
      }
    }
    if (entry === this.running && entry.abortReason !== 'cancelled') {
      if (entry.abortReason !== 'superseded') this.counters.cancelled++;
      entry.abortReason = 'cancelled';
      entry.handle?.abort();
    }
  }

  private pump(): void {
    if (this.running) return;
    let next = this.completions.shift();
    if (!next && this.chats.length > 0) {
      const wait = this.lastCompletionAt + this.typingHoldMs - Date.now();
      if (wait > 0) {
        // The user is typing: chat resumes once they pause.
        clearTimeout(this.holdTimer);
        this.holdTimer = setTimeout(() => this.pump(), wait);
        this.onChange();
        return;
      }
      next = this.chats.shift();
    }
    if (!next) {
      const waiters = this.idleWaiters;
      this.idleWaiters = [];
      for (const w of waiters) w();
      this.onChange();
      return;
    }
    this.running = next;
    next.abortReason = undefined;
    let handle: GenerationHandle;
    try {
      handle = next.job.start();
    } catch (err) {
      this.finish(next, { status: 'failed', error: asError(err) });
      return;
    }
    next.handle = handle;
    this.onChange();
    handle.done.then(
      (stats) => {
        this.onGeneration(stats);
        this.onSettled(next, stats);
      },
      (err: unknown) => this.onFailed(next, asError(err)),
    );
  }

  private onSettled(entry: Entry, stats: GenerateStats): void {
    const reason = entry.abortReason;
    if (reason === 'preempted' && stats.aborted) {
      // Put the chat turn back first in line; it restarts once the completions are served.
      this.counters.preemptions++;
      this.running = undefined;
      entry.handle = undefined;
      this.chats.unshift(entry);
      this.pump();
      return;
    }
    if (reason === 'cancelled' || reason === 'superseded') {
      this.finish(entry, { status: reason, stats });
      return;
    }
    this.counters.finished++;
    this.finish(entry, { status: 'finished', stats });
  }

  private onFailed(entry: Entry, error: Error): void {
    const reason = entry.abortReason;
    // Some engines reject an aborted generation instead of resolving it.
    if (reason === 'cancelled' || reason === 'superseded') this.finish(entry, { status: reason });
    else if (reason === 'preempted') this.onSettled(entry, emptyStats(true));
    else this.finish(entry, { status: 'failed', error });
  }

  private finish(entry: Entry, outcome: JobOutcome): void {
    if (this.running === entry) this.running = undefined;
    entry.handle = undefined;
    this.settle(entry, outcome);
    this.pump();
  }

  private settle(entry: Entry, outcome: JobOutcome): void {
    if (entry.settled) return;
    entry.settled = true;
    entry.resolve(outcome);
  }
}

function asError(err: unknown): Error {
  return err instanceof Error ? err : new Error(String(err));
}

/** Statistics of a generation that produced nothing (aborted before it ran, or nothing left). */
export function emptyStats(aborted: boolean): GenerateStats {
  return {
    promptTokens: 0,
    reusedTokens: 0,
    promptMs: 0,
    decodeMs: 0,
    generated: 0,
    targetPasses: 0,
    drafted: 0,
    accepted: 0,
    draftMs: 0,
    verifyMs: 0,
    maxPassTokens: 0,
    aborted,
  };
}
