// Tunables of inline completion (prompt sizes, stop rules). The same defaults serve the
// language server and `leapfrog complete` (they must give the same text).
// LEAPFROG_COMPLETION_TIME_BUDGET_MS overrides the time budget in both — tests set it to 0 so
// that output does not depend on the machine's speed. The generation configuration (sampling,
// speculation) is not here: engine/generation/generation-config.ts builds it.

export interface CompletionOptions {
  maxTokens: number;
  /** After the first line, stop once generation has run this long (0 = no limit). */
  timeBudgetMs: number;
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
  const budget = env.LEAPFROG_COMPLETION_TIME_BUDGET_MS;
  if (budget !== undefined && budget !== '' && Number.isFinite(Number(budget))) {
    opts.timeBudgetMs = Math.max(0, Number(budget));
  }
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
