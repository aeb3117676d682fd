// Where Node's own C headers (node_api.h) are: npm's nodedir when set, else beside the
// running node binary. Shared by native/build.mjs and the arm64 addon build (the headers are
// the same for every architecture).
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';

export function nodeIncludeDir() {
  const candidates = [
    process.env.npm_config_nodedir && join(process.env.npm_config_nodedir, 'include', 'node'),
    join(dirname(dirname(process.execPath)), 'include', 'node'),
  ].filter(Boolean);
  const found = candidates.find((dir) => existsSync(join(dir, 'node_api.h')));
  if (!found) {
    throw new Error(`Node's headers (node_api.h) not found in: ${candidates.join(', ')}`);
  }
  return found;
}
