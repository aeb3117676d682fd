// Where tests find the repository, the CLI and the shared reference data.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { repoRoot, sharedDataDir } from '../fixtures/shared-data';

export { repoRoot };
export const cliPath = join(repoRoot, 'bin', 'leapfrog.js');
export const addonBuilt = existsSync(join(repoRoot, 'native', 'build', 'leapfrog_native.node'));
export const cliBuilt = existsSync(join(repoRoot, 'dist', 'cli.js')) && addonBuilt;

/** ../shared/data (or $LEAPFROG_SHARED_DATA), or undefined when absent. */
export function sharedData(): string | undefined {
  const dir = sharedDataDir();
  return existsSync(join(dir, 'models')) ? dir : undefined;
}

/** Prints why, then skips the current test or hook (mocha's skip alone says nothing). */
export function skipBecause(ctx: Mocha.Context, why: string): never {
  console.log(`      SKIP: ${why}`);
  ctx.skip();
}
