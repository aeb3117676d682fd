// How long the extension host's event loop was blocked (perf_hooks' event-loop delay
// histogram): the editor freezes while it is. "Leapfrog: Report Extension Host
// Responsiveness" shows the figures since the last report (or since activation) and starts
// over; the editor-latency benchmark reads them from the notification (and, with its
// `--diagnose DIR`, what each block was: exthost-diagnostics.ts).
import { monitorEventLoopDelay, type IntervalHistogram } from 'node:perf_hooks';
import * as vscode from 'vscode';
import { ExtHostDiagnostics } from './exthost-diagnostics';

export class Responsiveness implements vscode.Disposable {
  private readonly histogram: IntervalHistogram;
  private since = Date.now();
  private readonly diagnostics = ExtHostDiagnostics.fromEnvironment();

  constructor() {
    // A reading is the time between two ticks: a block of B ms reads B to B + resolution, and
    // a quiet loop reads the resolution itself. 10 ms always on is cheap; when diagnosing
    // (the benchmark) 1 ms, so the longest reading is the longest block to within 1 ms.
    this.histogram = monitorEventLoopDelay({ resolution: this.diagnostics ? 1 : 10 });
    this.histogram.enable();
  }

  /** The figures (ms) since the last report, and starts over. */
  take(): { maxMs: number; p99Ms: number; meanMs: number; seconds: number } {
    const h = this.histogram;
    const ms = (ns: number) => Math.round(ns / 1e5) / 10;
    const out = {
      maxMs: ms(h.max),
      p99Ms: ms(h.percentile(99)),
      meanMs: ms(h.mean),
      seconds: Math.round((Date.now() - this.since) / 100) / 10,
    };
    h.reset();
    this.since = Date.now();
    return out;
  }

  report(): void {
    this.diagnostics?.save();
    const r = this.take();
    void vscode.window.showInformationMessage(
      `Leapfrog: extension host event loop over ${r.seconds} s: ` +
        `longest block ${r.maxMs} ms, p99 ${r.p99Ms} ms, mean ${r.meanMs} ms`,
    );
  }

  dispose(): void {
    this.histogram.disable();
    this.diagnostics?.dispose();
  }
}
