// Shared by the stand-alone benchmark scripts: `--name value` arguments, percentiles, and
// the `--out FILE` result.
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';

export function arg(name: string, fallback?: string): string | undefined {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? process.argv[i + 1] : fallback;
}

/** The p-th percentile (nearest rank) of `xs`; NaN when empty. */
export function percentile(xs: number[], p: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s.length ? s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))]! : NaN;
}

/** Writes `result` as JSON to the file named by `--out`, when one is. */
export function writeOut(result: unknown): void {
  const out = arg('out');
  if (!out) return;
  mkdirSync(dirname(out), { recursive: true });
  writeFileSync(out, JSON.stringify(result, null, 2));
}
