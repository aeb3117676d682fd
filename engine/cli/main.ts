// The `leapfrog` command line (contract in DESIGN.md). Errors are one line on stderr
// starting `leapfrog: error:`, exit code 1 (2 for bad usage); never a stack trace.
import { MAX_DRAFT_BUDGET } from '../protocol';
import { CliError, UsageError } from './args';
import { benchCommand } from './bench';
import { completeCommand } from './complete';
import { generateCommand } from './generate';
import { lspCommand } from './lsp';
import { modelsCommand } from './models';
import { serveCommand } from './serve';
import { tokenizeCommand } from './tokenize';

const USAGE = `usage: leapfrog <command> [options]

commands:
  generate  [generation flags] (--prompt T | --prompt-file F) [--max-tokens N]
            [--temperature T] [--top-k K] [--top-p P] [--min-p P] [--repeat-penalty R]
            [--seed S] [--ctx N] [--corpus-file F] [--json]
  tokenize  [--model F] (--text T | --file F) [--add-special] [--parse-special] [--json]
  complete  [generation flags] --file SRC --line L --character C [--max-tokens N] [--json]
  lsp       --stdio [--model F] [--draft F] [--threads N] [--nice 0-19] (default 10: the
            engine yields the CPU to the editor)
            [--endpoint URL [--endpoint-model M] [--api-key K]] (completions and chat on an
            OpenAI-compatible server instead of the local model; the key also from
            LEAPFROG_API_KEY)
  models    [--json] [--folder F]... (GGUFs in Ollama, LM Studio, the Hugging Face and
            llama.cpp caches and the folders given; drafts paired with targets)
  serve     [generation flags] [--host 127.0.0.1] [--port 8080] [--api-key K] [--parallel N]
            [--ctx N] (OpenAI-compatible HTTP and llama.cpp's /infill; any host but loopback
            needs --api-key; prints "leapfrog: serving http://HOST:PORT")
  bench     [--quick] [--sections roofline,cpu,spec] [--models …] [--reps N] [--threads N]
            (the same harness as npm run bench; prints tables, writes bench-results/*.json)

generation flags (generate, complete and serve): [--model F] [--draft F|self]
  [--spec auto|off|ngram|draft] [--budget 0..${MAX_DRAFT_BUDGET}] [--tree] [--threads N (0: physical cores)]
  [--backend auto|cpu|cuda|metal]

--model defaults to the bundled model (models/leapfrog-coder.gguf).`;

const commands: Record<string, (argv: string[]) => Promise<void>> = {
  generate: generateCommand,
  tokenize: tokenizeCommand,
  complete: completeCommand,
  lsp: lspCommand,
  bench: benchCommand,
  models: modelsCommand,
  serve: serveCommand,
};

function fail(message: string, code: number): never {
  process.stderr.write(`leapfrog: error: ${message.split('\n')[0]}\n`);
  if (code === 2) process.stderr.write(`${USAGE}\n`);
  process.exit(code);
}

async function main(argv: string[]): Promise<void> {
  const [name, ...rest] = argv;
  if (name === undefined || name === '--help' || name === '-h' || name === 'help') {
    process.stdout.write(`${USAGE}\n`);
    return;
  }
  const command = commands[name];
  if (!command) throw new UsageError(`unknown command '${name}'`);
  await command(rest);
}

main(process.argv.slice(2)).then(
  () => {
    // Output is flushed before exit so piped JSON is never cut short.
    process.stdout.write('', () => process.exit(0));
  },
  (e: unknown) => {
    if (e instanceof UsageError) fail(e.message, 2);
    fail(e instanceof CliError || e instanceof Error ? e.message : String(e), 1);
  },
);
