// Adaptive debounce: wait longer after a keystroke when the engine is slow (a request that
// takes 400 ms is wasted if the user types again in 100 ms), and barely at all when it is fast.
/** Answers this fast (typical, ms) need no wait before asking. */
const FAST_MS = 40;
const MAX_DELAY_MS = 60;

export class AdaptiveDebounce {
  private ewma: number | undefined;

  /** Records how long one completion request took, end to end. */
  record(ms: number): void {
    this.ewma = this.ewma === undefined ? ms : 0.7 * this.ewma + 0.3 * ms;
  }

  get latencyMs(): number {
    return this.ewma ?? 0;
  }

  /**
   * The wait before the next request: the user's minimum, raised to a quarter of the typical
   * latency beyond 40 ms — none while the engine answers within 40 ms (each answer then lands
   * before the next keystroke of fast typing), at most 60 ms: the engine answers by its
   * deadline and a request the next keystroke supersedes costs it at most one forward pass,
   * while every millisecond waited here adds to every pause. (VS Code's own 50 ms wait is
   * off for this provider: register.ts.)
   */
  delay(minimumMs: number): number {
    const adaptive =
      this.ewma === undefined ? 0 : Math.min(MAX_DELAY_MS, Math.max(0, this.ewma - FAST_MS) / 4);
    return Math.max(minimumMs, Math.round(adaptive));
  }
}
