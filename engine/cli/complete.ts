// `leapfrog complete`: the ghost text the extension would show, through the server's own
// completion path (engine/completion/complete-file.ts).
import { readFileSync } from 'node:fs';
import { completeFile } from '../completion/complete-file';
import { CliError, UsageError, intOption, parseArgs, stringOption } from './args';

const spec = {
  model: { kind: 'string' as const },
  draft: { kind: 'string' as const },
  threads: { kind: 'string' as const },
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
  try {
    readFileSync(file);
  } catch (e) {
    throw new CliError(`${file}: cannot read (${(e as Error).message})`);
  }
  const result = await completeFile({
    model: stringOption(args, 'model'),
    draft: stringOption(args, 'draft'),
    file,
    line: intOption(args, 'line', 0, 0),
    character: intOption(args, 'character', 0, 0),
    maxTokens: args['max-tokens'] === undefined ? undefined : intOption(args, 'max-tokens', 0, 1),
    threads: args.threads === undefined ? undefined : intOption(args, 'threads', 0, 1),
  });
  process.stdout.write(args.json ? JSON.stringify(result) + '\n' : result.text + '\n');
}
