// Runs `leapfrog` as a user would (node bin/leapfrog.js …) and captures what it printed.
// Completion's time budget and deadline are off (as in the sidecar tests): tests compare texts,
// and a loaded machine must not cut one run's ghost text shorter than another's.
import { spawn } from 'node:child_process';
import { cliPath } from './paths';

export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
  ms: number;
}

export function runCli(
  args: string[],
  opts: { timeoutMs?: number; input?: string } = {},
): Promise<CliResult> {
  return new Promise((resolveRun, reject) => {
    const started = Date.now();
    const child = spawn(process.execPath, [cliPath, ...args], {
      stdio: ['pipe', 'pipe', 'pipe'],
      env: {
        ...process.env,
        LEAPFROG_COMPLETION_TIME_BUDGET_MS: '0',
        LEAPFROG_COMPLETION_DEADLINE_MS: '0',
      },
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString('utf8')));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString('utf8')));
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(
        new Error(`leapfrog ${args.join(' ')} did not finish in ${opts.timeoutMs ?? 60000} ms`),
      );
    }, opts.timeoutMs ?? 60000);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolveRun({ code, stdout, stderr, ms: Date.now() - started });
    });
    child.stdin.end(opts.input ?? '');
  });
}

export async function runCliJson<T>(args: string[]): Promise<T> {
  const r = await runCli([...args, '--json']);
  if (r.code !== 0) throw new Error(`leapfrog ${args.join(' ')} failed (${r.code}): ${r.stderr}`);
  return JSON.parse(r.stdout) as T;
}
