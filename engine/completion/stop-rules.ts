// Stop rules applied while tokens stream in, so the engine does not spend time on text that
// post-processing would throw away: a newline in single-line mode, the end of the block,
// a special token, too many lines, or the time budget once the first line is complete.
// The final text still goes through postprocess(); these rules only end generation early.
import { blockEndLine, cutAtSpecial, isSingleLine, type CompletionContext } from './postprocess';

export interface StopOptions {
  /** After the first line is complete, stop once this much time has passed since the
   * generation started (0 = no limit). */
  timeBudgetMs: number;
  maxLines: number;
}

export class StreamStopRules {
  private readonly singleLine: boolean;

  constructor(
    private readonly ctx: CompletionContext,
    private readonly opts: StopOptions,
    private readonly startedAt: number,
  ) {
    this.singleLine = isSingleLine(ctx);
  }

  /** True when generation should stop now, given all text so far. */
  shouldStop(text: string, now: number): boolean {
    if (cutAtSpecial(text, this.ctx.specialTexts).length < text.length) return true;
    const newlines = countNewlines(text);
    if (newlines === 0) return false;
    if (this.singleLine) return true;
    if (newlines >= this.opts.maxLines) return true;
    if (this.opts.timeBudgetMs > 0 && now - this.startedAt > this.opts.timeBudgetMs) return true;
    // Only complete lines decide whether the block has ended.
    const complete = text.slice(0, text.lastIndexOf('\n'));
    return blockEndLine(complete, this.ctx.linePrefix) >= 0;
  }
}

function countNewlines(s: string): number {
  let n = 0;
  for (let i = s.indexOf('\n'); i >= 0; i = s.indexOf('\n', i + 1)) n++;
  return n;
}
