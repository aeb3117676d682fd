// Tunables of inline completion (prompt sizes, stop rules). The same defaults serve the
// language server and `leapfrog complete` (they must give the same text).
// LEAPFROG_COMPLETION_TIME_BUDGET_MS and LEAPFROG_COMPLETION_DEADLINE_MS override the time
// budget and the deadline in both — tests set them to 0 so that output does not depend on the
// machine's speed. The generation configuration (sampling,
// speculation) is not here: engine/generation/generation-config.ts builds it.

export interface CompletionOptions {
  maxTokens: number;
  /** After the first line, stop once generation has run this long (0 = no limit). */
  timeBudgetMs: number;
  /**
   * Hard deadline of a request (0 = none): once it has passed, the request is answered with
   * what has been generated so far as soon as post-processing keeps any of it, and the
   * generation goes on in the background (for at most `backgroundMs` from the request's
   * start) to fill the typed-ahead cache while the user reads.
   */
  deadlineMs: number;
  backgroundMs: number;
  /**
   * While a deadline is in force: answer as soon as the suggestion's first line is complete
   * (post-processing keeps it), rather than wait for the whole block or the deadline; the
   * rest is generated into the typed-ahead cache and the client is told it grew.
   */
  firstLineFirst: boolean;
  /**
   * While a deadline is in force: once a suggestion is whole, compute the one after
   * accepting it in the background (CompletionService.acceptAhead).
   */
  acceptAhead: boolean;
  /** Chat starts or resumes only this long after the last completion request (typing). */
  chatTypingHoldMs: number;
  maxLines: number;
  prefixTokens: number;
  suffixTokens: number;
  /** Tokens for chunks of other files (repository-level templates only). */
  extraTokens: number;
  anchorLines: number;
}

export const defaultCompletionOptions: CompletionOptions = {
  maxTokens: 128,
  // Ghost text must come quickly: once the first line is done, stop adding lines 150 ms
  // after the request started (the typed-ahead cache serves the rest as the user types).
  timeBudgetMs: 150,
  // A suggestion that comes later than this interrupts the user's typing more than it helps:
  // show what there is, finish it behind the scenes (the setting leapfrog.completion.deadlineMs).
  deadlineMs: 150,
  backgroundMs: 3000,
  // Measured in the editor (BENCHMARKS.md, session 9): with the bundled model a block of
  // several lines took the whole 150 ms deadline, its first line ~25 ms.
  firstLineFirst: true,
  acceptAhead: true,
  // Longer than the pause between two keystrokes, short enough not to be felt in the chat.
  chatTypingHoldMs: 600,
  maxLines: 16,
  prefixTokens: 1024,
  suffixTokens: 256,
  extraTokens: 1024,
  anchorLines: 16,
};

export function completionOptionsFromEnv(
  overrides: Partial<CompletionOptions> = {},
  env: NodeJS.ProcessEnv = process.env,
): CompletionOptions {
  const opts = { ...defaultCompletionOptions, ...overrides };
  const fromEnv = (name: string): number | undefined => {
    const v = env[name];
    return v !== undefined && v !== '' && Number.isFinite(Number(v))
      ? Math.max(0, Number(v))
      : undefined;
  };
  opts.timeBudgetMs = fromEnv('LEAPFROG_COMPLETION_TIME_BUDGET_MS') ?? opts.timeBudgetMs;
  opts.deadlineMs = fromEnv('LEAPFROG_COMPLETION_DEADLINE_MS') ?? opts.deadlineMs;
  return opts;
}

/** Token budgets that fit the session's context with room for the output. */
export function fitBudgets(opts: CompletionOptions, nCtx: number, maxTokens: number) {
  const room = Math.max(64, nCtx - maxTokens - 16);
  const prefixTokens = Math.min(opts.prefixTokens, Math.floor(room * 0.6));
  const suffixTokens = Math.min(opts.suffixTokens, Math.floor(room * 0.2));
  const extraTokens = Math.max(
    0,
    Math.min(opts.extraTokens, room - prefixTokens - suffixTokens - 32),
  );
  return { prefixTokens, suffixTokens, extraTokens, room };
}
