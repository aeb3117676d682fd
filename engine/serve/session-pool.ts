// N native sessions, each running one generation at a time; requests beyond N wait in one
// first-in-first-out queue. A job is cancelled by its request (the client went away): dropped
// while it waits, aborted within a pass while it runs. A free slot is chosen by the longest
// prompt prefix it already holds, so a client that repeats its context (an editor, a chat)
// gets the KV-cache reuse of the session that served it before.
import type { GenerateStats, GenerationHandle, NativeSession } from '../native/addon';

export interface PoolJob {
  prompt: readonly number[];
  /** Starts the native work on the session given; the job may abort its own handle. */
  start(session: NativeSession): GenerationHandle;
}

export type PoolOutcome =
  | { status: 'finished'; stats: GenerateStats }
  | { status: 'cancelled'; stats?: GenerateStats; queued: boolean }
  | { status: 'failed'; error: Error };

export interface PoolTicket {
  outcome: Promise<PoolOutcome>;
  /** Idempotent; a no-op once the job has ended. */
  cancel(): void;
}

export interface PoolSnapshot {
  slots: number;
  busy: number;
  queued: number;
}

interface Slot {
  session: NativeSession;
  /** The prompt of the last job it ran (its KV cache starts with it). */
  cached: readonly number[];
  entry?: Entry;
}

interface Entry {
  job: PoolJob;
  resolve(o: PoolOutcome): void;
  settled: boolean;
  cancelled: boolean;
  handle?: GenerationHandle;
}

export class SessionPool {
  private readonly slots: Slot[];
  private readonly queue: Entry[] = [];
  private idleWaiters: (() => void)[] = [];

  constructor(
    sessions: readonly NativeSession[],
    /** The figures of every generation that ran, also cancelled ones. */
    private readonly onGeneration: (stats: GenerateStats) => void = () => {},
  ) {
    if (sessions.length === 0) throw new Error('a session pool needs at least one session');
    this.slots = sessions.map((session) => ({ session, cached: [] }));
  }

  submit(job: PoolJob): PoolTicket {
    let resolve!: (o: PoolOutcome) => void;
    const outcome = new Promise<PoolOutcome>((r) => (resolve = r));
    const entry: Entry = { job, resolve, settled: false, cancelled: false };
    this.queue.push(entry);
    this.pump();
    return { outcome, cancel: () => this.cancel(entry) };
  }

  cancelAll(): void {
    for (const e of [...this.queue]) this.cancel(e);
    for (const s of this.slots) if (s.entry) this.cancel(s.entry);
  }

  /** Resolves once nothing runs and nothing waits. */
  idle(): Promise<void> {
    if (this.isIdle()) return Promise.resolve();
    return new Promise((r) => this.idleWaiters.push(r));
  }

  snapshot(): PoolSnapshot {
    return {
      slots: this.slots.length,
      busy: this.slots.filter((s) => s.entry).length,
      queued: this.queue.length,
    };
  }

  /** The sessions, for the owner to free once the pool is idle. */
  sessions(): NativeSession[] {
    return this.slots.map((s) => s.session);
  }

  private isIdle(): boolean {
    return this.queue.length === 0 && this.slots.every((s) => !s.entry);
  }

  private cancel(entry: Entry): void {
    if (entry.settled || entry.cancelled) return;
    entry.cancelled = true;
    const i = this.queue.indexOf(entry);
    if (i >= 0) {
      this.queue.splice(i, 1);
      this.settle(entry, { status: 'cancelled', queued: true });
      this.notifyIdle();
      return;
    }
    entry.handle?.abort(); // settles when the native work has stopped
  }

  private pump(): void {
    for (;;) {
      const free = this.slots.filter((s) => !s.entry);
      const entry = free.length > 0 ? this.queue.shift() : undefined;
      if (!entry) break;
      this.run(bestSlot(free, entry.job.prompt), entry);
    }
    this.notifyIdle();
  }

  private run(slot: Slot, entry: Entry): void {
    slot.entry = entry;
    slot.cached = entry.job.prompt;
    let handle: GenerationHandle;
    try {
      handle = entry.job.start(slot.session);
    } catch (err) {
      this.release(slot, entry, { status: 'failed', error: asError(err) });
      return;
    }
    entry.handle = handle;
    handle.done.then(
      (stats) => {
        this.onGeneration(stats);
        this.release(
          slot,
          entry,
          entry.cancelled
            ? { status: 'cancelled', stats, queued: false }
            : { status: 'finished', stats },
        );
      },
      (err: unknown) =>
        this.release(
          slot,
          entry,
          entry.cancelled
            ? { status: 'cancelled', queued: false }
            : { status: 'failed', error: asError(err) },
        ),
    );
  }

  private release(slot: Slot, entry: Entry, outcome: PoolOutcome): void {
    slot.entry = undefined;
    entry.handle = undefined;
    // A failed generation may have left the cache in any state; claim nothing about it.
    if (outcome.status === 'failed') slot.cached = [];
    this.settle(entry, outcome);
    this.pump();
  }

  private settle(entry: Entry, outcome: PoolOutcome): void {
    if (entry.settled) return;
    entry.settled = true;
    entry.resolve(outcome);
  }

  private notifyIdle(): void {
    if (!this.isIdle()) return;
    const waiters = this.idleWaiters;
    this.idleWaiters = [];
    for (const w of waiters) w();
  }
}

/** The free slot whose cached prompt shares the longest prefix with `prompt`. */
function bestSlot(free: Slot[], prompt: readonly number[]): Slot {
  let best = free[0];
  let bestLength = -1;
  for (const s of free) {
    const n = commonPrefix(s.cached, prompt);
    if (n > bestLength) {
      best = s;
      bestLength = n;
    }
  }
  return best;
}

function commonPrefix(a: readonly number[], b: readonly number[]): number {
  const n = Math.min(a.length, b.length);
  let i = 0;
  while (i < n && a[i] === b[i]) i++;
  return i;
}

function asError(err: unknown): Error {
  return err instanceof Error ? err : new Error(String(err));
}
