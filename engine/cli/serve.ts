// `leapfrog serve`: the engine as an OpenAI-compatible HTTP server (engine/serve/), plus
// llama.cpp's /infill. Prints `leapfrog: serving http://HOST:PORT` on stdout once listening
// (`--port 0` picks a free port; that line tells which), then logs to stderr. Loopback only
// unless an API key is given; SIGINT/SIGTERM cancel what runs and exit cleanly.
import { isIP } from 'node:net';
import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import { loadAddon } from '../native/load-addon';
import { checkGgufFile } from '../models/check-gguf';
import { SELF_DRAFT } from '../native/self-draft';
import { ServeEngine } from '../serve/serve-engine';
import { createApiServer } from '../serve/http-server';
import { log } from '../server/log';
import { CliError, UsageError, intOption, parseArgs, stringOption } from './args';
import {
  backendFrom,
  generationOptionSpec,
  modelPathsFrom,
  settingsFrom,
  threadsFrom,
} from './model-options';

const spec = {
  ...generationOptionSpec,
  host: { kind: 'string' as const },
  port: { kind: 'string' as const },
  'api-key': { kind: 'string' as const },
  parallel: { kind: 'string' as const },
  ctx: { kind: 'string' as const },
};

export const DEFAULT_HOST = '127.0.0.1';
export const DEFAULT_PORT = 8080;
const MAX_PARALLEL = 64;

/** Loopback addresses: reachable from this machine only, so no key is needed. */
export function isLoopback(host: string): boolean {
  const h = host.toLowerCase();
  if (h === 'localhost' || h === '::1' || h === '[::1]') return true;
  return isIP(h) === 4 && h.startsWith('127.');
}

export async function serveCommand(argv: string[]): Promise<void> {
  const args = parseArgs(argv, spec);
  const host = stringOption(args, 'host') ?? DEFAULT_HOST;
  const port = intOption(args, 'port', DEFAULT_PORT, 0);
  if (port > 65535) throw new UsageError(`--port must be at most 65535, got ${port}`);
  const parallel = intOption(args, 'parallel', 1, 1);
  if (parallel > MAX_PARALLEL) throw new UsageError(`--parallel must be at most ${MAX_PARALLEL}`);
  const nCtx = args.ctx === undefined ? undefined : intOption(args, 'ctx', 0, 16);
  // The key may come from the environment, which other users cannot read in `ps`.
  const apiKey = stringOption(args, 'api-key') ?? process.env.LEAPFROG_API_KEY;
  if (apiKey !== undefined && apiKey.trim() === '') throw new UsageError('--api-key is empty');
  if (!isLoopback(host) && apiKey === undefined) {
    throw new UsageError(
      `--host ${host} is reachable from other machines: give --api-key K (clients then send ` +
        `"Authorization: Bearer K")`,
    );
  }
  const settings = settingsFrom(args);
  const paths = modelPathsFrom(args, settings.speculation);
  try {
    checkGgufFile(paths.model, 'model');
    if (paths.draft && paths.draft !== SELF_DRAFT) checkGgufFile(paths.draft, 'draft model');
  } catch (e) {
    throw new CliError((e as Error).message);
  }
  const addon = loadAddon();
  const threads = threadsFrom(args, addon);
  const backend = backendFrom(args);

  const serve = new ServeEngine({ addon: () => addon, threads, nCtx, parallel, settings });
  const server = createApiServer(serve, { apiKey, log: (m) => log('info', m) });
  const address = await listen(server, host, port);
  process.stdout.write(`leapfrog: serving ${address}\n`);

  let stopping: Promise<void> | undefined;
  let signalled!: () => void;
  const signal = new Promise<void>((r) => (signalled = r));
  const onSignal = (name: NodeJS.Signals) => {
    log('info', `${name}: shutting down`);
    signalled();
  };
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  const stop = () =>
    (stopping ??= (async () => {
      server.close();
      server.closeIdleConnections();
      await serve.shutdown();
      server.closeAllConnections();
      process.off('SIGINT', onSignal);
      process.off('SIGTERM', onSignal);
    })());

  const loading = serve.load({ ...paths, threads, backend });
  const loaded = await Promise.race([
    loading.then(
      (ready) => ({ ok: true as const, ready }),
      (e: unknown) => ({ ok: false as const, message: e instanceof Error ? e.message : String(e) }),
    ),
    signal.then(() => undefined),
  ]);
  if (loaded === undefined) {
    await loading.catch(() => undefined); // let the load finish before freeing what it made
    await stop();
    return;
  }
  if (!loaded.ok) {
    await stop();
    throw new CliError(loaded.message);
  }
  const { engine } = loaded.ready;
  log(
    'info',
    `model ready: ${engine.paths.model}${engine.paths.draft ? ` (draft ${engine.paths.draft})` : ''}, ` +
      `context ${engine.nCtx}, ${parallel} session${parallel === 1 ? '' : 's'}, ` +
      `${engine.threads} threads, ${engine.info.backend || 'cpu'}, load ${engine.loadMs} ms`,
  );
  await signal;
  await stop();
  log('info', 'stopped');
}

function listen(server: Server, host: string, port: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const onError = (e: NodeJS.ErrnoException) => {
      const why = e.code === 'EADDRINUSE' ? 'the address is in use' : e.message;
      reject(new CliError(`cannot listen on ${host}:${port}: ${why}`));
    };
    server.once('error', onError);
    server.listen(port, host, () => {
      server.off('error', onError);
      const a = server.address() as AddressInfo;
      const shown = a.family === 'IPv6' || a.address.includes(':') ? `[${a.address}]` : a.address;
      resolve(`http://${shown}:${a.port}`);
    });
  });
}
