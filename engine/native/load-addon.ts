// Finds and loads the compiled addon. LEAPFROG_ADDON, when set, is the only place looked at
// (so a test or a user can point at another build, or at nothing). In the repository it is
// native/build/ (always the fresh build, so a stale packaged copy in dist/ never shadows it);
// in a platform .vsix, which has no native/build/, it is dist/native/<platform>-<arch>/
// (`linux-x64`, `linux-arm64`: the names of vsce's --target, which scripts/package.mjs fills).
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { NativeAddon } from './addon';

let cached: NativeAddon | undefined;

/** This machine's name among the platform packages, as vsce's --target spells it. */
export function packageTarget(): string {
  return `${process.platform}-${process.arch}`;
}

export function addonPath(): string {
  const candidates = process.env.LEAPFROG_ADDON
    ? [process.env.LEAPFROG_ADDON]
    : [
        join(__dirname, '..', 'native', 'build', 'leapfrog_native.node'),
        join(__dirname, '..', '..', 'native', 'build', 'leapfrog_native.node'),
        join(__dirname, 'native', packageTarget(), 'leapfrog_native.node'),
      ];
  const found = candidates.find((p) => existsSync(p));
  if (!found) {
    // "native addon" starts both errors: extension/engine-availability.ts reads it so.
    throw new Error(
      `native addon not found: no engine build for ${packageTarget()} (looked in ${candidates.join(', ')}; in the repository: \`npm run build\`)`,
    );
  }
  return found;
}

export function loadAddon(): NativeAddon {
  if (!cached) {
    const path = addonPath();
    try {
      // eslint-disable-next-line @typescript-eslint/no-require-imports
      cached = require(path) as NativeAddon;
    } catch (e) {
      // Another architecture's build, a missing system library, an older glibc: dlopen says.
      throw new Error(
        `native addon failed to load on ${packageTarget()}: ${(e as Error).message.split('\n')[0]}`,
      );
    }
  }
  return cached;
}
