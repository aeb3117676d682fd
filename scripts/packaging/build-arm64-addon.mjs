// Cross-compiles the Node addon for Linux arm64 into native/build-arm64-addon/ with
// native/cmake/aarch64-linux-gnu.cmake. node-addon-api's headers are architecture-neutral and
// Node's own headers (node_api.h) are the local install's: N-API is a C ABI, the same on every
// architecture, so no arm64 Node headers are needed. Two jobs at most (a shared machine).
//   node scripts/packaging/build-arm64-addon.mjs
import { spawnSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { ARM64_BUILD_DIR, ARM64_CXX, hasTool, root } from './targets.mjs';
import { nodeIncludeDir } from '../../native/node-headers.mjs';

function fail(message) {
  console.error(`leapfrog: error: ${message}`);
  process.exit(1);
}

function run(cmd, args) {
  const r = spawnSync(cmd, args, { cwd: root, stdio: ['ignore', 'ignore', 'inherit'] });
  if (r.status !== 0) fail(`${cmd} ${args.join(' ')} failed (exit ${r.status})`);
}

if (!hasTool(ARM64_CXX)) fail(`${ARM64_CXX} not found (apt-get install g++-aarch64-linux-gnu)`);
const require = createRequire(import.meta.url);
const addonApiDir = dirname(require.resolve('node-addon-api/package.json'));
run('cmake', [
  '-S',
  join(root, 'native'),
  '-B',
  ARM64_BUILD_DIR,
  '-DCMAKE_BUILD_TYPE=Release',
  '-DLEAPFROG_CUDA=OFF',
  `-DCMAKE_TOOLCHAIN_FILE=${join(root, 'native', 'cmake', 'aarch64-linux-gnu.cmake')}`,
  `-DNODE_INCLUDE_DIR=${nodeIncludeDir()}`,
  `-DNODE_ADDON_API_DIR=${addonApiDir}`,
]);
run('cmake', ['--build', ARM64_BUILD_DIR, '--parallel', '2', '--target', 'leapfrog_native']);
console.log(`built ${join(ARM64_BUILD_DIR, 'leapfrog_native.node')}`);
