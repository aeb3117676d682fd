// Formats (or with --check, verifies) every C++ file under native/ with clang-format.
import { execFileSync, spawnSync } from 'node:child_process';

const check = process.argv.includes('--check');
const files = execFileSync(
  'git',
  ['ls-files', '--cached', '--others', '--exclude-standard', 'native'],
  {
    encoding: 'utf8',
  },
)
  .split('\n')
  .filter((f) => /\.(cpp|h|hpp|cc)$/.test(f));
const probe = spawnSync('clang-format', ['--version']);
if (probe.error) {
  console.error('clang-format not found: install it (apt-get install clang-format)');
  process.exit(1);
}
const args = check ? ['--dry-run', '--Werror', ...files] : ['-i', ...files];
const r = spawnSync('clang-format', args, { stdio: 'inherit' });
process.exit(r.status ?? 1);
