// What blocked the extension host's event loop, for the editor-latency benchmark's `--diagnose
// DIR`: with LEAPFROG_DIAGNOSE_DIR set, every stall of a 10 ms timer over 30 ms is logged with
// what this thread did meanwhile — ran on a CPU (work: ours or VS Code's) or waited for one
// (other processes had the cores) — beside every garbage collection's pause; with
// LEAPFROG_DIAGNOSE_CPU=1 a CPU profile of the whole host runs too (`scripts/profile-blocks.mjs`
// lists what ran in each block). Each responsiveness report writes DIR/exthost-N.json (and
// .cpuprofile) and starts over; the writing itself is marked, it stalls the loop too.
import { readFileSync, writeFileSync } from 'node:fs';
import { Session } from 'node:inspector';
import { join } from 'node:path';
import { PerformanceObserver } from 'node:perf_hooks';

/** One stall of the event loop, as DIR/exthost-N.json lists it. */
export interface Stall {
  at: number;
  /** Date.now() at its end: to line it up with other processes' logs. */
  wall: number;
  lateMs: number;
  ranMs: number;
  waitedMs: number;
  whileSaving?: true;
}

/** DIR/exthost-N.json: the stalls and GC pauses since the previous save. */
export interface DiagnosticsLog {
  stalls: Stall[];
  gcs: { at: number; ms: number; kind: number }[];
}

const STALL_MS = 30;
const round = (x: number) => Math.round(x * 10) / 10;

export class ExtHostDiagnostics {
  private readonly stalls: Stall[] = [];
  private readonly gcs: DiagnosticsLog['gcs'] = [];
  private readonly gcObserver: PerformanceObserver;
  private readonly probe: NodeJS.Timeout;
  private readonly profiler?: Session;
  private saved = 0;
  private savingUntil = 0;

  static fromEnvironment(): ExtHostDiagnostics | undefined {
    const dir = process.env.LEAPFROG_DIAGNOSE_DIR;
    return dir ? new ExtHostDiagnostics(dir, process.env.LEAPFROG_DIAGNOSE_CPU === '1') : undefined;
  }

  private constructor(
    private readonly dir: string,
    cpuProfile: boolean,
  ) {
    this.gcObserver = new PerformanceObserver((list) => {
      for (const e of list.getEntries()) {
        // Node 16+: a GC entry's detail says minor (1), major (4), incremental (8)…
        const kind = (e as { detail?: { kind?: number } }).detail?.kind ?? -1;
        this.gcs.push({ at: Math.round(e.startTime), ms: round(e.duration), kind });
      }
    });
    this.gcObserver.observe({ entryTypes: ['gc'] });
    let last = { t: performance.now(), ...threadTimes() };
    this.probe = setInterval(() => {
      const now = { t: performance.now(), ...threadTimes() };
      const lateMs = now.t - last.t - 10;
      if (lateMs > STALL_MS) {
        this.stalls.push({
          at: Math.round(now.t),
          wall: Date.now(),
          lateMs: round(lateMs),
          ranMs: round(now.ranMs - last.ranMs),
          waitedMs: round(now.waitedMs - last.waitedMs),
          ...(last.t < this.savingUntil ? { whileSaving: true as const } : {}),
        });
      }
      last = now;
    }, 10);
    this.probe.unref();
    if (cpuProfile) {
      this.profiler = new Session();
      this.profiler.connect();
      this.startProfile();
    }
  }

  private startProfile(): void {
    const s = this.profiler!;
    s.post('Profiler.enable', () =>
      s.post('Profiler.setSamplingInterval', { interval: 500 }, () => s.post('Profiler.start')),
    );
  }

  /** Writes what was gathered since the last save, and starts over. */
  save(): void {
    const n = this.saved++;
    const write = (profile?: object) => {
      if (profile)
        writeFileSync(join(this.dir, `exthost-${n}.cpuprofile`), JSON.stringify(profile));
      const log: DiagnosticsLog = { stalls: this.stalls, gcs: this.gcs };
      writeFileSync(join(this.dir, `exthost-${n}.json`), JSON.stringify(log, null, 1));
      this.stalls.length = 0;
      this.gcs.length = 0;
      // The first tick after this one spans the writing: its stall is ours, marked.
      this.savingUntil = performance.now();
    };
    if (!this.profiler) return write();
    this.profiler.post('Profiler.stop', (err, result) => {
      write(err ? undefined : result.profile);
      this.startProfile();
    });
  }

  dispose(): void {
    clearInterval(this.probe);
    this.gcObserver.disconnect();
    this.profiler?.disconnect();
  }
}

/** This (main) thread's time on a CPU and waiting for one, ms (Linux; zeros elsewhere). */
function threadTimes(): { ranMs: number; waitedMs: number } {
  try {
    const [ran, waited] = readFileSync(`/proc/self/task/${process.pid}/schedstat`, 'utf8')
      .split(' ')
      .map(Number);
    return { ranMs: ran! / 1e6, waitedMs: waited! / 1e6 };
  } catch {
    return { ranMs: 0, waitedMs: 0 };
  }
}
