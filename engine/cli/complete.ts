// `leapfrog complete`: the ghost text the extension would show, through the server's own
// completion path (engine/completion/complete-file.ts). It takes the generation flags of
// `generate` (--spec, --budget, --tree, --draft, --backend, --threads), which reach the
// engine as the sidecar's settings do.
import { readFileSync } from 'node:fs';
import { completeFile } from '../completion/complete-file';
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
  file: { kind: 'string' as const },
  line: { kind: 'string' as const },
  character: { kind: 'string' as const },
  'max-tokens': { kind: 'string' as const },
  json: { kind: 'flag' as const },
};

export async function completeCommand(argv: string[]): Promise<void> {
  const args = parseArgs(argv, spec);
  const file = stringOption(args, 'file');
  if (file === undefined || args.line === undefined || args.character === undefined) {
    throw new UsageError('complete needs --file, --line and --character');
  }
  const settings = settingsFrom(args);
  const paths = modelPathsFrom(args, settings.speculation);
  try {
    readFileSync(file);
  } catch (e) {
    throw new CliError(`${file}: cannot read (${(e as Error).message})`);
  }
  const result = await completeFile({
    ...paths,
    threads: threadsFrom(args),
    backend: backendFrom(args),
    settings,
    file,
    line: intOption(args, 'line', 0, 0),
    character: intOption(args, 'character', 0, 0),
    maxTokens: args['max-tokens'] === undefined ? undefined : intOption(args, 'max-tokens', 0, 1),
  });
  process.stdout.write(args.json ? JSON.stringify(result) + '\n' : result.text + '\n');
}
