// The real sidecar (`node bin/leapfrog.js lsp --stdio`) driven over raw stdio bytes: the
// fuzzer writes exactly the bytes it generated (no JSON-RPC library on this side to clean
// them up) and reads the answers with its own framing parser.
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { cli, testEnv, THREADS } from '../protocol/sidecar';
import { message } from './hostile-input';

export interface RpcResponse {
  id: unknown;
  result?: unknown;
  error?: { code: number; message: string };
}

export class RawSidecar {
  readonly child: ChildProcessWithoutNullStreams;
  stderr = '';
  /** Answers with id null and code -32700 (JSON-RPC's parse error). */
  parseErrors = 0;
  responses = 0;
  /** Set when what the sidecar wrote on stdout was not LSP framing or not JSON. */
  outputError: string | undefined;
  bytesWritten = 0;
  private stdout = Buffer.alloc(0);
  private waiting = new Map<string, (r: RpcResponse) => void>();
  private probeId = 0;
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;

  constructor(model: string) {
    this.child = spawn(
      process.execPath,
      [cli, 'lsp', '--stdio', '--threads', THREADS, '--model', model],
      {
        env: testEnv,
        stdio: ['pipe', 'pipe', 'pipe'],
      },
    );
    this.child.stderr.on('data', (d: Buffer) => {
      this.stderr += d.toString();
      if (this.stderr.length > 4 << 20) this.stderr = this.stderr.slice(-(2 << 20)); // keep the tail
    });
    this.child.stdout.on('data', (d: Buffer) => this.onStdout(d));
    // A write into a dead process fails with EPIPE; `alive()` reports that, not a throw here.
    this.child.stdin.on('error', () => undefined);
    this.exited = new Promise((resolve) =>
      this.child.once('exit', (code, signal) => resolve({ code, signal })),
    );
  }

  alive(): boolean {
    return this.child.exitCode === null && this.child.signalCode === null;
  }

  /** Writes bytes, honouring back-pressure so a 10 MB burst is not all buffered here. */
  async write(bytes: Buffer): Promise<void> {
    if (!this.alive() || this.child.stdin.destroyed) return;
    this.bytesWritten += bytes.length;
    if (!this.child.stdin.write(bytes)) {
      await new Promise<void>((resolve) => {
        const done = () => {
          this.child.stdin.off('drain', done);
          this.child.off('exit', done);
          resolve();
        };
        this.child.stdin.once('drain', done);
        this.child.once('exit', done);
      });
    }
  }

  /** A request with an id the fuzzer never uses; rejects after `timeoutMs` without an answer. */
  async request(method: string, params: unknown, timeoutMs: number): Promise<RpcResponse> {
    const id = `probe-${++this.probeId}`;
    const answered = new Promise<RpcResponse>((resolve) => this.waiting.set(id, resolve));
    await this.write(message({ id, method, params }));
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () => reject(new Error(`${method}: no answer in ${timeoutMs} ms`)),
        timeoutMs,
      );
    });
    try {
      return await Promise.race([answered, timeout]);
    } finally {
      clearTimeout(timer);
      this.waiting.delete(id);
    }
  }

  async notify(method: string, params: unknown): Promise<void> {
    await this.write(message({ method, params }));
  }

  /** CPU seconds (user + system) the process has used so far (Linux /proc). */
  cpuSeconds(): number {
    const pid = this.child.pid;
    if (pid === undefined || !this.alive()) return 0;
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      return (Number(fields[11]) + Number(fields[12])) / 100; // utime, stime in clock ticks
    } catch {
      return 0;
    }
  }

  /** Ends stdin (the client went away) and waits for the process to exit. */
  async closeInput(
    timeoutMs: number,
  ): Promise<{ code: number | null; signal: NodeJS.Signals | null } | 'hung'> {
    this.child.stdin.end();
    const r = await Promise.race([this.exited, sleep(timeoutMs).then(() => 'hung' as const)]);
    if (r === 'hung') this.child.kill('SIGKILL');
    return r;
  }

  /** shutdown + exit as a well-behaved client does; SIGKILL when that does not end it. */
  async stop(): Promise<void> {
    if (this.alive()) {
      await this.request('shutdown', undefined, 5000).catch(() => undefined);
      await this.notify('exit', undefined);
      await Promise.race([this.exited, sleep(5000)]);
    }
    if (this.alive()) this.child.kill('SIGKILL');
  }

  private onStdout(chunk: Buffer): void {
    this.stdout = Buffer.concat([this.stdout, chunk]);
    for (;;) {
      const end = this.stdout.indexOf('\r\n\r\n');
      if (end < 0) return;
      const header = this.stdout.subarray(0, end).toString('ascii');
      const length = Number(/Content-Length: *(\d+)/i.exec(header)?.[1]);
      if (!Number.isFinite(length)) {
        // The sidecar broke its own framing: remembered as a failure, the rest is unreadable.
        this.outputError = `the sidecar wrote a bad header: ${JSON.stringify(header)}`;
        this.stdout = Buffer.alloc(0);
        return;
      }
      if (this.stdout.length < end + 4 + length) return;
      const body = this.stdout.subarray(end + 4, end + 4 + length).toString('utf8');
      this.stdout = this.stdout.subarray(end + 4 + length);
      try {
        this.onMessage(JSON.parse(body) as Record<string, unknown>);
      } catch {
        this.outputError = `the sidecar wrote a body that is not JSON: ${body.slice(0, 200)}`;
      }
    }
  }

  private onMessage(msg: Record<string, unknown>): void {
    if ('method' in msg) {
      // A request from the server (work-done progress, configuration): answer it as a client would.
      if ('id' in msg) void this.write(message({ id: msg.id, result: null }));
      return;
    }
    this.responses++;
    const r = msg as unknown as RpcResponse;
    if (r.id === null && r.error?.code === -32700) this.parseErrors++;
    if (typeof r.id === 'string') this.waiting.get(r.id)?.(r);
  }
}

export function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}
