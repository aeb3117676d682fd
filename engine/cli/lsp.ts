// `leapfrog lsp --stdio`: the sidecar language server, exactly what the extension starts.
import { runLanguageServer } from '../server/run-server';
import { normalizeEndpointUrl } from '../remote/endpoint-url';
import { UsageError, intOption, parseArgs, stringOption } from './args';
import { lowerProcessPriority } from './process-priority';

const spec = {
  stdio: { kind: 'flag' as const },
  model: { kind: 'string' as const },
  draft: { kind: 'string' as const },
  threads: { kind: 'string' as const },
  endpoint: { kind: 'string' as const },
  'endpoint-model': { kind: 'string' as const },
  'api-key': { kind: 'string' as const },
  nice: { kind: 'string' as const },
};

// The editor first: see process-priority.ts. 10 gives the editor ~9 of 10 cycles when both want
// a core, and the engine all of them when the editor is idle.
const SIDECAR_NICENESS = 10;

export async function lspCommand(argv: string[]): Promise<void> {
  const args = parseArgs(argv, spec);
  if (args.stdio !== true) throw new UsageError('lsp needs --stdio (the only transport)');
  const threads = args.threads === undefined ? undefined : intOption(args, 'threads', 0, 1);
  const nice = intOption(args, 'nice', SIDECAR_NICENESS, 0);
  if (nice > 19) throw new UsageError(`--nice must be 0–19, got ${nice}`);
  lowerProcessPriority(nice);
  const endpoint = stringOption(args, 'endpoint');
  if (endpoint !== undefined) {
    try {
      normalizeEndpointUrl(endpoint);
    } catch (err) {
      throw new UsageError(`--endpoint: ${(err as Error).message}`);
    }
  }
  await runLanguageServer({
    model: stringOption(args, 'model'),
    draft: stringOption(args, 'draft'),
    threads,
    endpoint,
    endpointModel: stringOption(args, 'endpoint-model'),
    // A key on the command line shows in `ps`; the environment variable does not.
    apiKey: stringOption(args, 'api-key') ?? (process.env.LEAPFROG_API_KEY || undefined),
  });
}
