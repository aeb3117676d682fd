// A small argument parser for the `leapfrog` command line: `--name value`, `--flag`, and
// nothing else. Unknown options and missing values are usage errors (exit code 2).

export class UsageError extends Error {}
export class CliError extends Error {}

export interface OptionSpec {
  /** 'string' takes a value; 'flag' does not. */
  kind: 'string' | 'flag';
  hidden?: boolean;
}

export type ParsedArgs = Record<string, string | boolean | undefined>;

export function parseArgs(argv: string[], spec: Record<string, OptionSpec>): ParsedArgs {
  const out: ParsedArgs = {};
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (!arg.startsWith('--')) throw new UsageError(`unexpected argument '${arg}'`);
    const eq = arg.indexOf('=');
    const name = arg.slice(2, eq < 0 ? undefined : eq);
    const opt = spec[name];
    if (!opt) throw new UsageError(`unknown option '--${name}'`);
    if (opt.kind === 'flag') {
      if (eq >= 0) throw new UsageError(`option '--${name}' takes no value`);
      out[name] = true;
      continue;
    }
    const value = eq >= 0 ? arg.slice(eq + 1) : argv[++i];
    if (value === undefined) throw new UsageError(`option '--${name}' needs a value`);
    out[name] = value;
  }
  return out;
}

export function intOption(args: ParsedArgs, name: string, fallback: number, min = 0): number {
  const raw = args[name];
  if (raw === undefined) return fallback;
  const n = Number(raw);
  if (typeof raw !== 'string' || !Number.isInteger(n) || n < min) {
    throw new UsageError(`--${name} must be an integer ≥ ${min}, got '${String(raw)}'`);
  }
  return n;
}

export function floatOption(args: ParsedArgs, name: string, fallback: number, min = 0): number {
  const raw = args[name];
  if (raw === undefined) return fallback;
  const n = Number(raw);
  if (typeof raw !== 'string' || !Number.isFinite(n) || n < min) {
    throw new UsageError(`--${name} must be a number ≥ ${min}, got '${String(raw)}'`);
  }
  return n;
}

export function stringOption(args: ParsedArgs, name: string): string | undefined {
  const raw = args[name];
  return typeof raw === 'string' ? raw : undefined;
}

export function choiceOption<T extends string>(
  args: ParsedArgs,
  name: string,
  choices: readonly T[],
  fallback: T,
): T {
  const raw = stringOption(args, name);
  if (raw === undefined) return fallback;
  if (!(choices as readonly string[]).includes(raw)) {
    throw new UsageError(`--${name} must be one of ${choices.join('|')}, got '${raw}'`);
  }
  return raw as T;
}
