// The platform packages this repository can make, and where each one's addon comes from.
// A target's name is vsce's --target (and `${process.platform}-${process.arch}`, which is
// what engine/native/load-addon.ts looks for under dist/native/ in an installed package).
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const root = join(fileURLToPath(new URL('.', import.meta.url)), '..', '..');

/** The cross compiler the linux-arm64 addon needs (Debian: g++-aarch64-linux-gnu). */
export const ARM64_CXX = 'aarch64-linux-gnu-g++';
export const ARM64_BUILD_DIR = join(root, 'native', 'build-arm64-addon');

export function hasTool(name) {
  return spawnSync('sh', ['-c', `command -v ${name}`], { stdio: 'ignore' }).status === 0;
}

/**
 * Every target with its addon path and, where it cannot be made here, why not.
 * ELF e_machine: what the addon's header must say (test/packaging checks it).
 */
export function targets() {
  return [
    {
      name: 'linux-x64',
      elfMachine: 62,
      addon: process.env.LEAPFROG_ADDON || join(root, 'native', 'build', 'leapfrog_native.node'),
      unavailable: undefined,
    },
    {
      name: 'linux-arm64',
      elfMachine: 183,
      addon: join(ARM64_BUILD_DIR, 'leapfrog_native.node'),
      unavailable: hasTool(ARM64_CXX)
        ? undefined
        : `${ARM64_CXX} not found (apt-get install g++-aarch64-linux-gnu)`,
    },
  ];
}

/** Where `npm run package` writes a target's package. */
export function vsixPath(pkg, target, outDir = root) {
  return join(outDir, `${pkg.name}-${target}-${pkg.version}.vsix`);
}

export const bundledModels = ['models/leapfrog-coder.gguf', 'models/leapfrog-coder-draft.gguf'];
