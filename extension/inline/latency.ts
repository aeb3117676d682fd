// Adaptive debounce: wait longer after a keystroke when the engine is slow (a request that
// takes 400 ms is wasted if the user types again in 100 ms), and barely at all when it is fast.
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
   * latency — at most 60 ms: the engine answers by its deadline and a request the next
   * keystroke supersedes costs it at most one forward pass, while every millisecond waited
   * here adds to every pause (VS Code itself waits ~50 ms before asking).
   */
  delay(minimumMs: number): number {
    const adaptive = this.ewma === undefined ? 0 : Math.min(60, this.ewma / 4);
    return Math.max(minimumMs, Math.round(adaptive));
  }
}
