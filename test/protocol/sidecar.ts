// Spawns the real sidecar (`node bin/leapfrog.js lsp --stdio`) and talks to it through
// vscode-jsonrpc's client side, as the extension's vscode-languageclient does. The suite
// skips (with the reason printed) while the native addon or the bundled CLI is not built.
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import {
  createMessageConnection,
  StreamMessageReader,
  StreamMessageWriter,
  type Logger,
  type MessageConnection,
} from 'vscode-jsonrpc/node';
import type { InlineCompletionList } from 'vscode-languageserver-protocol';
import { StatusRequest, type StatusResult } from '../../engine/protocol';

export const root = resolve(__dirname, '..', '..');
/** The launcher the extension's users run; LEAPFROG_TEST_CLI points at another build. */
export const cli = process.env.LEAPFROG_TEST_CLI ?? join(root, 'bin', 'leapfrog.js');

/** Why the suite cannot run here, or undefined when it can. */
export function skipReason(): string | undefined {
  const addon = process.env.LEAPFROG_ADDON ?? join(root, 'native', 'build', 'leapfrog_native.node');
  if (!existsSync(addon)) return `native addon not built (${addon} missing; run \`npm run build\`)`;
  if (!process.env.LEAPFROG_TEST_CLI && !existsSync(join(root, 'dist', 'cli.js'))) {
    return 'dist/cli.js missing (run `node scripts/bundle.mjs`)';
  }
  if (!existsSync(testModel())) return `no test model (${testModel()} missing)`;
  return undefined;
}

/** The bundled model when it is there, else the tiny TinyStories Llama (no FIM tokens). */
export function testModel(): string {
  if (process.env.LEAPFROG_TEST_MODEL) return process.env.LEAPFROG_TEST_MODEL;
  const bundled = join(root, 'models', 'leapfrog-coder.gguf');
  if (existsSync(bundled)) return bundled;
  return join(root, '..', 'shared', 'data', 'models', 'stories260K.gguf');
}

/** Same threads and no time budget in the sidecar and in `leapfrog complete`: same text. */
export const testEnv = {
  ...process.env,
  LEAPFROG_COMPLETION_TIME_BUDGET_MS: '0',
  LEAPFROG_COMPLETION_DEADLINE_MS: '0',
};
export const THREADS = '2';

export interface Sidecar {
  child: ChildProcessWithoutNullStreams;
  conn: MessageConnection;
  stderr: () => string;
  /** Errors the client's JSON-RPC layer logged (e.g. responses with id null). */
  clientErrors: string[];
  notifications: { method: string; params: unknown }[];
  stop(): Promise<void>;
}

export async function startSidecar(
  args: string[] = ['--model', testModel()],
  initializationOptions: unknown = {},
): Promise<Sidecar> {
  const child = spawn(process.execPath, [cli, 'lsp', '--stdio', '--threads', THREADS, ...args], {
    cwd: root,
    env: testEnv,
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let err = '';
  child.stderr.on('data', (d: Buffer) => (err += d.toString()));
  const clientErrors: string[] = [];
  const logger: Logger = {
    error: (m) => clientErrors.push(m),
    warn: (m) => clientErrors.push(m),
    info: () => {},
    log: () => {},
  };
  const conn = createMessageConnection(
    new StreamMessageReader(child.stdout),
    new StreamMessageWriter(child.stdin),
    logger,
  );
  const notifications: { method: string; params: unknown }[] = [];
  conn.onNotification((method, params) => {
    notifications.push({ method, params });
  });
  // $/progress has its own dispatch in vscode-jsonrpc; with no handler for a token it lands here.
  conn.onUnhandledProgress((params) => notifications.push({ method: '$/progress', params }));
  conn.onRequest('window/workDoneProgress/create', () => null);
  conn.listen();
  await conn.sendRequest('initialize', {
    processId: process.pid,
    rootUri: null,
    capabilities: { window: { workDoneProgress: true } },
    initializationOptions,
  });
  await conn.sendNotification('initialized', {});
  return {
    child,
    conn,
    stderr: () => err,
    clientErrors,
    notifications,
    async stop() {
      const exited = new Promise<void>((r) => child.once('exit', () => r()));
      try {
        await Promise.race([conn.sendRequest('shutdown'), delay(5000)]);
        await conn.sendNotification('exit');
      } catch {
        // the process may be gone already
      }
      await Promise.race([exited, delay(5000)]);
      if (child.exitCode === null) child.kill('SIGKILL');
      conn.dispose();
    },
  };
}

export async function status(s: Sidecar): Promise<StatusResult> {
  return s.conn.sendRequest(StatusRequest);
}

/** Polls status until the model load has finished (ready, busy or error). */
export async function settledStatus(s: Sidecar, timeoutMs = 60_000): Promise<StatusResult> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const st = await status(s);
    if (st.state !== 'loading') return st;
    if (Date.now() > end) throw new Error(`model still loading after ${timeoutMs} ms`);
    await delay(50);
  }
}

/** Opens a document and asks for the ghost text at `position` (what the server inserts). */
export async function completeIn(
  s: Sidecar,
  uri: string,
  text: string,
  position: { line: number; character: number },
): Promise<string> {
  await s.conn.sendNotification('textDocument/didOpen', {
    textDocument: { uri, languageId: 'python', version: 1, text },
  });
  const list = (await s.conn.sendRequest('textDocument/inlineCompletion', {
    textDocument: { uri },
    position,
    context: { triggerKind: 2 },
  })) as InlineCompletionList;
  const insert = list.items[0]?.insertText ?? '';
  return typeof insert === 'string' ? insert : insert.value;
}

export function delay(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}

export function fileUri(path: string): string {
  return pathToFileURL(path).href;
}
