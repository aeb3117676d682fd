// The hard deadline of one completion request (CompletionOptions.deadlineMs): armed when the
// request starts — or later, when a request joins a prefetch that had none — and stopped
// when the request ends before it fires.
export class Deadline {
  private timer: ReturnType<typeof setTimeout> | undefined;
  private onPass: () => void = () => {};
  passed = false;
  /** Whether the clock was started (a prefetch's starts only if a request joins it). */
  armed = false;

  /** Starts the clock (once; later calls do nothing). */
  arm(ms: number): void {
    if (this.timer !== undefined || this.passed) return;
    this.armed = true;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.passed = true;
      this.onPass();
    }, ms);
  }

  /** `f` runs when the deadline passes (at once if it has). */
  whenPassed(f: () => void): void {
    this.onPass = f;
    if (this.passed) f();
  }

  /** The request is over: a deadline that has not passed never will. */
  stop(): void {
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = undefined;
  }
}
