// `leapfrog lsp --stdio`: the sidecar language server, exactly what the extension starts.
import { runLanguageServer } from '../server/run-server';
import { normalizeEndpointUrl } from '../remote/endpoint-url';
import { UsageError, intOption, parseArgs, stringOption } from './args';

const spec = {
  stdio: { kind: 'flag' as const },
  model: { kind: 'string' as const },
  draft: { kind: 'string' as const },
  threads: { kind: 'string' as const },
  endpoint: { kind: 'string' as const },
  'endpoint-model': { kind: 'string' as const },
  'api-key': { kind: 'string' as const },
};

export async function lspCommand(argv: string[]): Promise<void> {
  const args = parseArgs(argv, spec);
  if (args.stdio !== true) throw new UsageError('lsp needs --stdio (the only transport)');
  const threads = args.threads === undefined ? undefined : intOption(args, 'threads', 0, 1);
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
