// `leapfrog tokenize`: text → ids with the model's own tokenizer. Defaults follow llama.cpp's
// tokenizer test vectors: no BOS/EOS added, special-token text not parsed.
import { readFileSync } from 'node:fs';
import { loadAddon } from '../native/load-addon';
import { CliError, UsageError, parseArgs, stringOption } from './args';
import {
  backendFrom,
  loadForCli,
  modelOptionSpec,
  modelPathFrom,
  threadsFrom,
} from './model-options';

const spec = {
  ...modelOptionSpec,
  text: { kind: 'string' as const },
  file: { kind: 'string' as const },
  'add-special': { kind: 'flag' as const },
  'parse-special': { kind: 'flag' as const },
  json: { kind: 'flag' as const },
};

export async function tokenizeCommand(argv: string[]): Promise<void> {
  const args = parseArgs(argv, spec);
  const text = stringOption(args, 'text');
  const file = stringOption(args, 'file');
  if ((text === undefined) === (file === undefined)) {
    throw new UsageError('tokenize needs exactly one of --text or --file');
  }
  let input = text ?? '';
  if (file !== undefined) {
    try {
      input = readFileSync(file, 'utf8');
    } catch (e) {
      throw new CliError(`${file}: cannot read (${(e as Error).message})`);
    }
  }
  // Tokenizing needs the vocabulary only, so vocabulary-only GGUFs work too.
  const addon = loadAddon();
  const options = {
    threads: threadsFrom(args, addon),
    backend: backendFrom(args),
    vocabOnly: true,
  };
  const paths = { model: modelPathFrom(args), draft: null };
  const { target: model } = await loadForCli(addon, paths, options);
  const tokens = model.tokenize(
    input,
    args['add-special'] === true,
    args['parse-special'] === true,
  );
  model.free();
  process.stdout.write(args.json ? JSON.stringify({ tokens }) + '\n' : tokens.join(' ') + '\n');
}
