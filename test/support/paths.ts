// Where tests find the repository, the CLI and the shared reference data.
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';

export const repoRoot = resolve(__dirname, '..', '..');
export const cliPath = join(repoRoot, 'bin', 'leapfrog.js');
export const addonBuilt = existsSync(join(repoRoot, 'native', 'build', 'leapfrog_native.node'));
export const cliBuilt = existsSync(join(repoRoot, 'dist', 'cli.js')) && addonBuilt;

/** ../shared/data (or $LEAPFROG_SHARED_DATA), or undefined when absent. */
export function sharedData(): string | undefined {
  const dir = process.env.LEAPFROG_SHARED_DATA ?? resolve(repoRoot, '..', 'shared', 'data');
  return existsSync(join(dir, 'models')) ? dir : undefined;
}

/** Skips the current test (or hook) with a reason that the spec reporter shows. */
export function skipBecause(ctx: Mocha.Context, why: string): never {
  console.log(`      skipped: ${why}`);
  ctx.skip();
}
