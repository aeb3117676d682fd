// The model's measured prompt-evaluation speed on this machine, and the suffix it affords.
// Why: in a prefix-suffix-middle FIM prompt the suffix comes after the cursor, so every
// keystroke evaluates it again (KV-prefix reuse stops at the edit). A 1.5B model on two
// threads reads ~100 tokens a second: a 256-token suffix would cost 2.5 s a keystroke. So the
// suffix is sized to take at most a tenth of the request's deadline to read (at least 16
// tokens: the rest of the line and a little below), until then — and with no deadline — the
// configured size. The decision trades context after the cursor for ghost text in time.
import type { GenerateStats } from '../native/addon';

const DEADLINE_SHARE = 0.1;
const MIN_SUFFIX_TOKENS = 16;

export class PrefillRate {
  private tokensPerMs: number | undefined;

  /** Takes a generation's prompt figures (prompts of a few fresh tokens say little). */
  note(stats: GenerateStats): void {
    const fresh = stats.promptTokens - stats.reusedTokens;
    if (fresh < 32 || !(stats.promptMs > 0)) return;
    const rate = fresh / stats.promptMs;
    this.tokensPerMs = this.tokensPerMs === undefined ? rate : 0.7 * this.tokensPerMs + 0.3 * rate;
  }

  suffixTokens(configured: number, deadlineMs: number): number {
    if (this.tokensPerMs === undefined || deadlineMs <= 0) return configured;
    const affordable = Math.floor(this.tokensPerMs * deadlineMs * DEADLINE_SHARE);
    return Math.max(Math.min(MIN_SUFFIX_TOKENS, configured), Math.min(configured, affordable));
  }
}
