// Running totals of speculation over the server's life, summed over every native generation
// (completions and chat turns alike), for `leapfrog/status`.
import type { GenerateStats } from '../native/addon';

export class SpeculationTotals {
  drafted = 0;
  accepted = 0;
  targetPasses = 0;
  maxPassTokens = 0;

  add(s: GenerateStats): void {
    this.drafted += s.drafted;
    this.accepted += s.accepted;
    this.targetPasses += s.targetPasses;
    // An addon from before maxPassTokens existed reports none: count nothing, not NaN.
    if (Number.isFinite(s.maxPassTokens)) {
      this.maxPassTokens = Math.max(this.maxPassTokens, s.maxPassTokens);
    }
  }
}
