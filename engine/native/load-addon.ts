// Finds and loads the compiled addon. In the repository it is native/build/ (always the
// fresh build, so a stale packaged copy in dist/ never shadows it); in the .vsix, which has
// no native/build/, it sits beside the bundled JavaScript in dist/.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { NativeAddon } from './addon';

let cached: NativeAddon | undefined;

export function addonPath(): string {
  const candidates = [
    process.env.LEAPFROG_ADDON,
    join(__dirname, '..', 'native', 'build', 'leapfrog_native.node'),
    join(__dirname, '..', '..', 'native', 'build', 'leapfrog_native.node'),
    join(__dirname, 'leapfrog_native.node'),
  ].filter((p): p is string => !!p);
  const found = candidates.find((p) => existsSync(p));
  if (!found) {
    throw new Error(
      `native addon not found (looked in ${candidates.join(', ')}); run \`npm run build\``,
    );
  }
  return found;
}

export function loadAddon(): NativeAddon {
  if (!cached) {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    cached = require(addonPath()) as NativeAddon;
  }
  return cached;
}
