// `leapfrog bench --passes 1,16,32 --ctx 1024 --model F --threads N [--backend B] [--reps R]
// --json`: the median wall time of one batched pass of n tokens (every row's logits) over a
// filled context of --ctx tokens, rolled back after each — what verifying a draft of n - 1
// tokens costs. The sizes take turns, one pass each per round (--reps rounds), so the ratios
// are of passes timed in the same seconds on a host whose speed drifts. Runs the engine's own
// benchmark tool (native/build/lf_bench) and prints
// `{"passes": [{"n", "ms"}, …]}` (with --json) or a table.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { defaultModelPath, packageRoot } from '../native/default-models';
import { CliError, parseArgs, UsageError } from './args';

interface LfBenchBatch {
  batch: { ctx: number; passes: { n: number; median_ms: number }[] };
}

export function benchPasses(argv: string[]): void {
  const args = parseArgs(argv, {
    passes: { kind: 'string' },
    ctx: { kind: 'string' },
    model: { kind: 'string' },
    threads: { kind: 'string' },
    backend: { kind: 'string' },
    reps: { kind: 'string' },
    json: { kind: 'flag' },
  });
  const passes = String(args.passes ?? '')
    .split(',')
    .map((s) => Number(s.trim()));
  if (passes.length === 0 || passes.some((n) => !Number.isInteger(n) || n < 1 || n > 64)) {
    throw new UsageError('--passes takes a comma-separated list of batch sizes from 1 to 64');
  }
  const tool = join(packageRoot(), 'native', 'build', 'lf_bench');
  if (!existsSync(tool)) throw new CliError(`${tool} is missing: run \`npm run build\` first`);
  const model = typeof args.model === 'string' ? args.model : defaultModelPath();
  const toolArgs = [
    model,
    '--sections',
    'batch',
    '--batches',
    passes.join(','),
    '--ctx-tokens',
    String(args.ctx ?? 1024),
    '--reps',
    String(args.reps ?? 5),
  ];
  if (args.threads !== undefined) toolArgs.push('--threads', String(args.threads));
  if (args.backend !== undefined) toolArgs.push('--backend', String(args.backend));
  const r = spawnSync(tool, toolArgs, { encoding: 'utf8', maxBuffer: 16 << 20 });
  if (r.status !== 0) {
    const line = (r.stderr ?? '').trim().split('\n').pop() ?? '';
    throw new CliError(line.replace(/^lf_bench: error: /, '') || `lf_bench exited ${r.status}`);
  }
  const out = JSON.parse(r.stdout) as LfBenchBatch;
  const result = { passes: out.batch.passes.map((p) => ({ n: p.n, ms: p.median_ms })) };
  if (args.json) {
    process.stdout.write(`${JSON.stringify(result)}\n`);
  } else {
    const one = result.passes.find((p) => p.n === 1)?.ms;
    for (const p of result.passes) {
      const ratio = one ? `  ${(p.ms / one).toFixed(2)}x a 1-token pass` : '';
      process.stdout.write(`n=${String(p.n).padStart(2)}  ${p.ms.toFixed(2)} ms${ratio}\n`);
    }
  }
}
