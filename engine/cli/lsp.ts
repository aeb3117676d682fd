// `leapfrog lsp --stdio`: the sidecar language server, exactly what the extension starts.
import { runLanguageServer } from '../server/run-server';
import { UsageError, intOption, parseArgs, stringOption } from './args';

const spec = {
  stdio: { kind: 'flag' as const },
  model: { kind: 'string' as const },
  draft: { kind: 'string' as const },
  threads: { kind: 'string' as const },
};

export async function lspCommand(argv: string[]): Promise<void> {
  const args = parseArgs(argv, spec);
  if (args.stdio !== true) throw new UsageError('lsp needs --stdio (the only transport)');
  const threads = args.threads === undefined ? undefined : intOption(args, 'threads', 0, 1);
  await runLanguageServer({
    model: stringOption(args, 'model'),
    draft: stringOption(args, 'draft'),
    threads,
  });
}
