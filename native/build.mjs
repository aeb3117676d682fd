// Builds the native engine with CMake: the addon (native/build/leapfrog_native.node),
// the C++ tests and the tools. Node's headers come from the running Node's install prefix
// (or `npm config get nodedir`), node-addon-api's from the package: no download.
import { execFileSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import os from 'node:os';
import { nodeIncludeDir } from './node-headers.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const require = createRequire(import.meta.url);
const buildDir = join(here, 'build');

function run(cmd, args) {
  execFileSync(cmd, args, { stdio: 'inherit' });
}

const addonApiDir = dirname(require.resolve('node-addon-api/package.json'));
const buildType = process.env.LEAPFROG_BUILD_TYPE ?? 'Release';
run('cmake', [
  '-S',
  here,
  '-B',
  buildDir,
  `-DCMAKE_BUILD_TYPE=${buildType}`,
  `-DNODE_INCLUDE_DIR=${nodeIncludeDir()}`,
  `-DNODE_ADDON_API_DIR=${addonApiDir}`,
]);
const jobs = String(Math.max(1, os.availableParallelism?.() ?? os.cpus().length));
run('cmake', ['--build', buildDir, '--parallel', jobs]);
