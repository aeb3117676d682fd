// `leapfrog bench …`: the benchmark harness (scripts/bench.mjs → test/bench/), which prints a
// table and writes JSON to bench-results/. It lives with the repository's test code, so it
// runs from a checkout, not from the packaged extension.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { packageRoot } from '../native/default-models';
import { CliError } from './args';
import { benchPasses } from './bench-passes';

export async function benchCommand(argv: string[]): Promise<void> {
  // The batched-pass contract (bench-passes.ts) runs on its own, quickly.
  if (argv.includes('--passes')) return benchPasses(argv);
  const script = join(packageRoot(), 'scripts', 'bench.mjs');
  if (!existsSync(script)) {
    throw new CliError('bench runs from a repository checkout (scripts/bench.mjs is not here)');
  }
  const r = spawnSync(process.execPath, [script, ...argv], { stdio: 'inherit' });
  if (r.status !== 0) throw new CliError(`benchmark failed (exit ${r.status ?? r.signal})`);
}
