// `npm start`: until the extension lands, run the engine on a sample file with the bundled
// model and print the completion the extension would show.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { dirname, join } from 'node:path';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const sample = join(root, 'test', 'samples', 'fib.py');
if (!existsSync(join(root, 'dist', 'cli.js'))) {
  console.error('leapfrog: error: not built yet; run `npm install` (or `npm run build`) first');
  process.exit(1);
}
const r = spawnSync(
  process.execPath,
  [join(root, 'bin', 'leapfrog.js'), 'complete', '--file', sample, '--line', '4', '--character', '4', '--json'],
  { stdio: 'inherit' },
);
process.exit(r.status ?? 1);
