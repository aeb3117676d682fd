// Spawns the real server (`node bin/leapfrog.js serve --port 0 …`), reads the port from its
// one stdout line, waits for /health to say ok, and stops it with SIGTERM (the exit code
// must be 0: a clean shutdown).
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { cli, root, skipReason, testEnv, testModel, THREADS } from '../protocol/sidecar';

export { skipReason, testModel, THREADS };

export interface ServeProcess {
  child: ChildProcessWithoutNullStreams;
  url: string;
  stderr(): string;
  /** SIGTERM, then the exit code (SIGKILL and null after 10 s). */
  stop(): Promise<number | null>;
}

export async function startServe(args: string[] = []): Promise<ServeProcess> {
  const child = spawn(
    process.execPath,
    [cli, 'serve', '--port', '0', '--threads', THREADS, '--model', testModel(), ...args],
    { cwd: root, env: testEnv, stdio: ['pipe', 'pipe', 'pipe'] },
  );
  let out = '';
  let err = '';
  child.stderr.on('data', (d: Buffer) => (err += d.toString()));
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`no serving line in 30 s; stderr: ${err}`)),
      30_000,
    );
    child.stdout.on('data', (d: Buffer) => {
      out += d.toString();
      const m = /^leapfrog: serving (http:\/\/\S+)\n/m.exec(out);
      if (m) {
        clearTimeout(timer);
        resolve(m[1]);
      }
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`leapfrog serve exited (${code}) before serving; stderr: ${err}`));
    });
  });
  const proc: ServeProcess = {
    child,
    url,
    stderr: () => err,
    async stop() {
      if (child.exitCode !== null) return child.exitCode;
      const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
      const code = await exited;
      clearTimeout(timer);
      return code;
    },
  };
  await waitHealthy(url);
  return proc;
}

export async function waitHealthy(url: string, timeoutMs = 60_000): Promise<void> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const r = await fetch(`${url}/health`).catch(() => undefined);
    if (r?.status === 200) return;
    if (Date.now() > end) throw new Error(`not healthy after ${timeoutMs} ms`);
    await delay(50);
  }
}

export interface Health {
  status: string;
  slots_idle: number;
  slots_processing: number;
  requests_queued: number;
}

export async function health(url: string): Promise<Health> {
  return (await (await fetch(`${url}/health`)).json()) as Health;
}

/** Polls /health until nothing runs or waits; how long that took. */
export async function waitIdle(url: string, timeoutMs = 10_000): Promise<number> {
  const started = Date.now();
  for (;;) {
    const h = await health(url);
    if (h.slots_processing === 0 && h.requests_queued === 0) return Date.now() - started;
    if (Date.now() - started > timeoutMs) throw new Error(`still busy after ${timeoutMs} ms`);
    await delay(20);
  }
}

export async function postJson(
  url: string,
  body: unknown,
  headers: Record<string, string> = {},
): Promise<{ status: number; json: Record<string, unknown> }> {
  const r = await fetch(url, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
  return { status: r.status, json: (await r.json()) as Record<string, unknown> };
}

/** The `data:` payloads of a server-sent event stream, in order. */
export async function readEvents(r: Response): Promise<string[]> {
  const text = await r.text();
  return text
    .split('\n\n')
    .filter((e) => e.startsWith('data: '))
    .map((e) => e.slice('data: '.length));
}

export function delay(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}
