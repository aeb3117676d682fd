// The LSP fuzzer: bursts of hostile input (hostile-input.ts) written as raw bytes to the real
// sidecar (raw-sidecar.ts), each followed by a health check. Used by the short run in
// `npm test` (test/protocol/lsp-fuzz.test.ts) and the long run (test/bench/lsp-fuzz.ts).
//
// What each burst must leave behind:
// - Message bursts keep LSP framing intact, so the stream stays in step: afterwards a valid
//   textDocument/inlineCompletion and a leapfrog/status must be answered (a result, not an
//   error) within 20 s, the process must be alive, and stderr must hold no stack trace.
// - Framing bursts break the base protocol itself. LSP's header part has no resynchronisation
//   point (no magic, no checksum: after a wrong Content-Length the receiver cannot know where
//   the next message starts), and JSON-RPC's parse error (-32700, id null) only covers a body
//   that is not JSON. So after such a burst the sidecar may do one of two things: keep serving
//   (it answers a status probe), or stop reading in step — and then it must neither spin
//   (under half a core while it waits) nor crash: when the client goes away (stdin closed)
//   it exits by itself, with no signal and no stack trace. The fuzzer then starts a fresh
//   sidecar, as the extension does after a connection is lost.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Rng } from './rng';
import { HostileInput, type Burst, type BurstKind } from './hostile-input';
import { RawSidecar, sleep, type RpcResponse } from './raw-sidecar';

export const HEALTH_TIMEOUT_MS = 20_000;
const PROBE_URI = 'file:///leapfrog-probe/probe.py';
const PROBE_TEXT = 'def add(a, b):\n    return ';

/** What in stderr means the sidecar failed inside: a JS stack frame, a crash, an abort. */
const CRASH_SIGNS = [
  /^\s+at .+(:\d+:\d+\)?|\(native\)|<anonymous>\)?)$/m,
  /Uncaught|Unhandled|FATAL ERROR|Segmentation fault|SIGSEGV|SIGBUS|core dumped|Aborted|terminate called/,
];

export function crashSign(stderr: string): string | undefined {
  for (const re of CRASH_SIGNS) {
    const m = re.exec(stderr);
    if (m) {
      const at = Math.max(0, m.index - 600);
      return stderr.slice(at, m.index + 400);
    }
  }
  return undefined;
}

export type FramingOutcome = 'kept serving' | 'closed cleanly';

export interface FuzzSummary {
  seed: number;
  bursts: number;
  /** Frames written (for framing bursts: the broken piece counts as one). */
  frames: number;
  bytes: number;
  byKind: Partial<Record<BurstKind, number>>;
  framing: Record<string, Partial<Record<FramingOutcome, number>>>;
  sidecarsStarted: number;
  parseErrorsAnswered: number;
  healthChecks: number;
  /** The slowest health check (status + completion), ms: a sidecar slowing down shows here. */
  slowestHealthMs: number;
  failures: string[];
  ms: number;
}

export class LspFuzzer {
  readonly rng: Rng;
  readonly input: HostileInput;
  private sidecar: RawSidecar | undefined;
  private readonly scratch: string;
  readonly summary: FuzzSummary;
  private readonly started = Date.now();
  private probeVersion = 1;

  constructor(
    seed: number,
    private readonly model: string,
  ) {
    this.rng = new Rng(seed);
    this.scratch = mkdtempSync(join(tmpdir(), 'leapfrog-fuzz-'));
    this.input = new HostileInput(this.rng, this.scratch);
    this.summary = {
      seed,
      bursts: 0,
      frames: 0,
      bytes: 0,
      byKind: {},
      framing: {},
      sidecarsStarted: 0,
      parseErrorsAnswered: 0,
      healthChecks: 0,
      slowestHealthMs: 0,
      failures: [],
      ms: 0,
    };
  }

  /** Starts a sidecar, waits for its model and opens the probe document. */
  async start(): Promise<void> {
    const s = new RawSidecar(this.model);
    this.sidecar = s;
    this.summary.sidecarsStarted++;
    const init = await s.request(
      'initialize',
      { processId: process.pid, rootUri: null, capabilities: {} },
      HEALTH_TIMEOUT_MS,
    );
    if (!init.result) throw new Error(`initialize failed: ${JSON.stringify(init)}\n${s.stderr}`);
    await s.notify('initialized', {});
    await s.notify('textDocument/didOpen', {
      textDocument: { uri: PROBE_URI, languageId: 'python', version: 1, text: PROBE_TEXT },
    });
    const why = await this.health();
    if (why) throw new Error(`the fresh sidecar is not healthy: ${why}`);
  }

  /** Runs one burst and checks what it left; returns the failure, or undefined. */
  async run(burst: Burst): Promise<string | undefined> {
    const s = this.current();
    this.summary.bursts++;
    this.summary.byKind[burst.kind] = (this.summary.byKind[burst.kind] ?? 0) + 1;
    this.summary.frames += burst.frames.length;
    // Split the bytes at points of the seed's choosing: the reader must cope with any chunking.
    const all = Buffer.concat(burst.frames);
    this.summary.bytes += all.length;
    for (let at = 0; at < all.length;) {
      const n = this.rng.chance(0.5) ? all.length - at : this.rng.int(1, 1 << 16);
      await s.write(all.subarray(at, at + n));
      at += n;
    }
    const why =
      burst.kind === 'framing' ? await this.afterFraming(burst.label) : await this.health();
    if (why)
      this.summary.failures.push(
        `seed ${this.summary.seed}, burst ${this.summary.bursts} (${burst.kind}: ${burst.label}): ${why}`,
      );
    return why;
  }

  /** A random burst: mostly messages, now and then framing. */
  async runRandom(framingChance: number): Promise<string | undefined> {
    const kind: BurstKind = this.rng.chance(framingChance) ? 'framing' : this.pickWeighted();
    return this.run(this.input.burst(kind));
  }

  async stop(): Promise<void> {
    await this.sidecar?.stop();
    if (this.sidecar) this.summary.parseErrorsAnswered += this.sidecar.parseErrors;
    this.sidecar = undefined;
    this.summary.ms = Date.now() - this.started;
    rmSync(this.scratch, { recursive: true, force: true });
  }

  /** The valid requests after a burst: status and a completion, both answered with results. */
  async health(): Promise<string | undefined> {
    const s = this.current();
    this.summary.healthChecks++;
    const started = Date.now();
    try {
      const status = await this.settledStatus(s);
      if (!isResult(status)) return `leapfrog/status answered ${JSON.stringify(status)}`;
      const state = (status.result as { state?: unknown }).state;
      if (state !== 'ready' && state !== 'busy') {
        return `leapfrog/status says ${JSON.stringify(status.result).slice(0, 400)}`;
      }
      // A new first line each time: the same text would be answered from the typed-ahead
      // cache without reaching the model (and the code the fuzzed documents can break).
      const version = ++this.probeVersion;
      await s.notify('textDocument/didChange', {
        textDocument: { uri: PROBE_URI, version },
        contentChanges: [{ text: `# check ${version}\n${PROBE_TEXT}` }],
      });
      const completion = await s.request(
        'textDocument/inlineCompletion',
        {
          textDocument: { uri: PROBE_URI },
          position: { line: 2, character: 11 },
          context: { triggerKind: 2 },
        },
        HEALTH_TIMEOUT_MS,
      );
      const items = isResult(completion) && (completion.result as { items?: unknown }).items;
      if (!Array.isArray(items))
        return `inlineCompletion answered ${JSON.stringify(completion).slice(0, 400)}`;
    } catch (err) {
      return `${err instanceof Error ? err.message : String(err)}${this.processState(s)}`;
    } finally {
      this.summary.slowestHealthMs = Math.max(this.summary.slowestHealthMs, Date.now() - started);
    }
    return this.processState(s) || undefined;
  }

  private async settledStatus(s: RawSidecar): Promise<RpcResponse> {
    const end = Date.now() + HEALTH_TIMEOUT_MS;
    for (;;) {
      const r = await s.request('leapfrog/status', undefined, HEALTH_TIMEOUT_MS);
      const state = isResult(r) ? (r.result as { state?: unknown }).state : undefined;
      if (state !== 'loading' || Date.now() > end) return r;
      await sleep(100);
    }
  }

  /** '' when alive with a clean stderr and clean stdout; else what is wrong. */
  private processState(s: RawSidecar): string {
    const problems: string[] = [];
    if (!s.alive())
      problems.push(`the sidecar exited (code ${s.child.exitCode}, signal ${s.child.signalCode})`);
    const sign = crashSign(s.stderr);
    if (sign) problems.push(`stderr holds a stack trace or crash:\n${sign}`);
    if (s.outputError) problems.push(s.outputError);
    return problems.length ? `; ${problems.join('; ')}` : '';
  }

  /** See the comment at the top: kept serving, or idle until stdin closes, then a clean exit. */
  private async afterFraming(label: string): Promise<string | undefined> {
    const s = this.current();
    const tally = (this.summary.framing[label] ??= {});
    for (let i = 0; i < 2; i++) {
      const r = await s.request('leapfrog/status', undefined, 1500).catch(() => undefined);
      if (r && isResult(r)) {
        tally['kept serving'] = (tally['kept serving'] ?? 0) + 1;
        return this.health();
      }
      if (!s.alive()) break;
    }
    const cpuBefore = s.cpuSeconds();
    await sleep(1000);
    const cpu = s.cpuSeconds() - cpuBefore;
    const exit = await s.closeInput(15_000);
    this.summary.parseErrorsAnswered += s.parseErrors;
    const problems: string[] = [];
    if (cpu > 0.5) problems.push(`it used ${cpu.toFixed(2)} s of CPU in 1 s while out of step`);
    if (exit === 'hung') problems.push('it did not exit within 15 s of stdin closing');
    else if (exit.signal !== null || (exit.code !== 0 && exit.code !== 1)) {
      problems.push(`it exited with code ${exit.code}, signal ${exit.signal}`);
    }
    const sign = crashSign(s.stderr);
    if (sign) problems.push(`stderr holds a stack trace or crash:\n${sign}`);
    if (s.outputError) problems.push(s.outputError);
    this.sidecar = undefined;
    if (problems.length) return `out of step after the burst, then: ${problems.join('; ')}`;
    tally['closed cleanly'] = (tally['closed cleanly'] ?? 0) + 1;
    await this.start();
    return undefined;
  }

  /** Big bursts (10 MB documents, MB-sized messages) a quarter as often as the others. */
  private pickWeighted(): BurstKind {
    const heavy: BurstKind[] = ['big-documents', 'huge-message'];
    for (;;) {
      const kind = this.input.rng.pick([
        'not-json',
        'not-json-rpc',
        'wrong-types',
        'wrong-types',
        'positions',
        'big-documents',
        'invalid-utf8',
        'edits',
        'unknown-documents',
        'cancel',
        'huge-message',
      ] as const);
      if (!heavy.includes(kind) || this.rng.chance(0.25)) return kind;
    }
  }

  private current(): RawSidecar {
    if (!this.sidecar) throw new Error('no sidecar running (start() first)');
    return this.sidecar;
  }
}

function isResult(r: RpcResponse): boolean {
  return r.error === undefined && typeof r.result === 'object' && r.result !== null;
}
