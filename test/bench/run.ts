// `npm run bench` (scripts/bench.mjs runs this with tsx). Not a test: prints tables and
// writes bench-results/bench-<date>.json (git-ignored).
//
//   npm run bench -- [--quick] [--sections roofline,cpu,spec] [--models LIST] [--reps N]
//                    [--threads N] [--no-llama] [--pairs LIST] [--out FILE]
//
//   --models   CPU-section models, comma-separated: 0.5b-q8, 0.5b-q4km, 1.5b-q8, 1.5b-q4km,
//              bundled, bundled-draft, or a path to a GGUF. Default: all (bundled ones when the
//              files exist). --quick: 0.5b-q8,0.5b-q4km.
//   --reps     repetitions per figure (default 5; --quick 3); medians are reported.
//   --threads  CPU threads for both engines (default: 2, the development machine's cores).
//   --llama-threads  llama.cpp threads in the speculative section (default 1: see spec.ts).
//   --pairs    speculative-section pairs: stories (stories260K + its Q4_0 copy), bundled,
//              random (a random-weight 0.5B-shaped Q8_0 with `--draft self`, its own Q4_0
//              copy; 3 prompts of 64 tokens). Default: all three.
//   --prompts  prompts per pair (default 6; --quick 3); --max-tokens (default 128).
//   --spec-reps  rounds of the speculative section (default 1): each round runs every
//              configuration of a prompt back to back; figures are medians over the rounds.
//   --budgets  draft budgets (default 4,8,16,32).
//   --pp/--tg/--ctx/--batches  override 512 / 128 / 1024 / 1,2,4,8,16,32.
//   --no-llama skip the llama.cpp side.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { cpus, totalmem } from 'node:os';
import { join, resolve } from 'node:path';
import { repoRoot, sharedData } from '../support/paths';
import { makeBenchModel, type BenchQuant, type BenchShape } from './bench-models';
import { benchCpuModel, cpuTables, type CpuModelResult } from './cpu';
import { measureRoofline, type Roofline } from './roofline';
import {
  benchCorpus,
  benchSpecPair,
  corpusTable,
  specTable,
  type CorpusRow,
  type SpecPair,
  type SpecRow,
} from './spec';
import { requantizedCopy } from '../support/requantize';
import { GGMLType } from '../fixtures/gguf-writer';

function flag(name: string): boolean {
  return process.argv.includes(`--${name}`);
}
function opt(name: string, fallback?: string): string | undefined {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? process.argv[i + 1] : fallback;
}
const log = (s: string): void => void process.stderr.write(s + '\n');

const BUNDLED = join(repoRoot, 'models', 'leapfrog-coder.gguf');
const BUNDLED_DRAFT = join(repoRoot, 'models', 'leapfrog-coder-draft.gguf');
const RANDOM: Record<string, [BenchShape, BenchQuant]> = {
  '0.5b-q8': ['0.5b', 'Q8_0'],
  '0.5b-q4km': ['0.5b', 'Q4_K_M'],
  '1.5b-q8': ['1.5b', 'Q8_0'],
  '1.5b-q4km': ['1.5b', 'Q4_K_M'],
};
const LABEL: Record<string, string> = {
  '0.5b-q8': 'Qwen2.5-Coder-0.5B shape, Q8_0 (random weights)',
  '0.5b-q4km': 'Qwen2.5-Coder-0.5B shape, Q4_K_M mix (random weights)',
  '1.5b-q8': 'Qwen2.5-Coder-1.5B shape, Q8_0 (random weights)',
  '1.5b-q4km': 'Qwen2.5-Coder-1.5B shape, Q4_K_M mix (random weights)',
  bundled: 'bundled target models/leapfrog-coder.gguf',
  'bundled-draft': 'bundled draft models/leapfrog-coder-draft.gguf',
};

function machine(): Record<string, unknown> {
  let lscpu = '';
  try {
    lscpu = execFileSync('lscpu', { encoding: 'utf8' });
  } catch {
    /* not Linux */
  }
  const field = (k: string): string | undefined =>
    lscpu.match(new RegExp(`^${k}:\\s*(.*)$`, 'm'))?.[1];
  let load = '';
  try {
    load = readFileSync('/proc/loadavg', 'utf8').trim();
  } catch {
    /* not Linux */
  }
  return {
    cpu: field('Model name') ?? cpus()[0]?.model,
    cores_per_socket: field('Core\\(s\\) per socket'),
    nproc: cpus().length,
    mem_gb: Math.round(totalmem() / 2 ** 30),
    loadavg_at_start: load,
  };
}

async function main(): Promise<void> {
  const quick = flag('quick');
  const sections = (opt('sections', 'roofline,cpu,spec') ?? '').split(',');
  const reps = Number(opt('reps', quick ? '3' : '5'));
  const threads = Number(opt('threads', '2'));
  const llama = !flag('no-llama');
  const started = new Date();
  const results: {
    date: string;
    command: string;
    machine: Record<string, unknown>;
    roofline?: Roofline;
    cpu: CpuModelResult[];
    spec: { pair: SpecPair; rows: SpecRow[]; corpus?: CorpusRow[] }[];
    skipped: string[];
  } = {
    date: started.toISOString(),
    command: `npm run bench -- ${process.argv.slice(2).join(' ')}`.trim(),
    machine: machine(),
    cpu: [],
    spec: [],
    skipped: [],
  };
  const outFile = resolve(
    opt('out') ??
      join(repoRoot, 'bench-results', `bench-${started.toISOString().replace(/[:.]/g, '-')}.json`),
  );
  mkdirSync(join(outFile, '..'), { recursive: true });
  const save = (): void => writeFileSync(outFile, JSON.stringify(results, null, 2));
  const report: string[] = [];

  log(`machine: ${JSON.stringify(results.machine)}`);
  const roof = measureRoofline(threads, quick);
  results.roofline = roof;
  report.push(
    `Roofline (${threads} threads, lf_roofline): memory read ${roof.mem_read_gbs.toFixed(1)} GB/s per CPU-second ` +
      `(${roof.mem_read_gbs_wall.toFixed(1)} GB/s wall-clock in this run; 1 thread ${roof.mem_read_gbs_1thread.toFixed(1)}), ` +
      `int8 ${roof.int8_isa} ${roof.int8_gops.toFixed(0)} GOP/s (${roof.int8_gops_wall.toFixed(0)} wall), ` +
      `fp32 FMA ${roof.fp32_isa} ${roof.fp32_gflops.toFixed(0)} GFLOP/s (${roof.fp32_gflops_wall.toFixed(0)} wall)`,
  );
  log(report.at(-1)!);
  save();

  if (sections.includes('cpu')) {
    const defaultModels = quick
      ? '0.5b-q8,0.5b-q4km'
      : '0.5b-q8,0.5b-q4km,1.5b-q8,1.5b-q4km,bundled,bundled-draft';
    const models = (opt('models', defaultModels) ?? '').split(',').filter(Boolean);
    const cpuOpts = {
      threads,
      reps,
      pp: Number(opt('pp', '512')),
      tg: Number(opt('tg', '128')),
      ctx: Number(opt('ctx', '1024')),
      batches: (opt('batches', '1,2,4,8,16,32') ?? '').split(',').filter(Boolean).map(Number),
      llama,
      lfMaxBatch: opt('lf-max-batch') ? Number(opt('lf-max-batch')) : undefined,
      log,
    };
    for (const m of models) {
      let path: string;
      if (RANDOM[m]) path = makeBenchModel(RANDOM[m][0], RANDOM[m][1], log);
      else if (m === 'bundled' || m === 'bundled-draft') {
        path = m === 'bundled' ? BUNDLED : BUNDLED_DRAFT;
        if (!existsSync(path)) {
          results.skipped.push(`${m}: ${path} does not exist yet`);
          log(`skipping ${m}: ${path} does not exist yet`);
          continue;
        }
      } else path = resolve(m);
      log(`CPU: ${LABEL[m] ?? m}`);
      const r = await benchCpuModel(LABEL[m] ?? m, path, roof, cpuOpts);
      results.cpu.push(r);
      report.push(cpuTables(r));
      log(report.at(-1)!);
      save();
    }
  }

  if (sections.includes('spec')) {
    const pairs = (opt('pairs', 'stories,bundled,random') ?? '').split(',');
    const specOpts = {
      threads,
      llamaThreads: Number(opt('llama-threads', '1')),
      reps: Number(opt('spec-reps', '1')),
      budgets: (opt('budgets', '4,8,16,32') ?? '').split(',').map(Number),
      modes: ['off', 'ngram', 'draft', 'auto'] as ('off' | 'ngram' | 'draft' | 'auto')[],
      prompts: Number(opt('prompts', quick ? '3' : '6')),
      maxTokens: Number(opt('max-tokens', '128')),
      llama,
      log,
    };
    for (const p of pairs) {
      let pair: SpecPair | undefined;
      if (p === 'stories') {
        const data = sharedData();
        if (!data) {
          results.skipped.push('stories: shared data not found');
          continue;
        }
        const stories = join(data, 'models', 'stories260K.gguf');
        pair = {
          label: 'stories260K + its Q4_0 copy as draft (mechanics only)',
          target: stories,
          draft: requantizedCopy(stories, GGMLType.Q4_0),
          fim: false,
          prefixChars: 300,
          suffixChars: 0,
          ctx: 1024,
        };
      } else if (p === 'bundled') {
        if (!existsSync(BUNDLED) || !existsSync(BUNDLED_DRAFT)) {
          results.skipped.push(
            `bundled pair: ${existsSync(BUNDLED) ? BUNDLED_DRAFT : BUNDLED} does not exist yet`,
          );
          log(`skipping the bundled pair: not trained yet`);
          continue;
        }
        pair = {
          label: 'bundled pair leapfrog-coder + leapfrog-coder-draft',
          target: BUNDLED,
          draft: BUNDLED_DRAFT,
          fim: true,
          prefixChars: 1500,
          suffixChars: 400,
        };
      } else if (p === 'random') {
        // Random weights agree with no other model, so the draft is the target's own Q4_0
        // copy (what a user with one model gets); such a model loops on a few tokens, which
        // lookup drafting predicts.
        pair = {
          label: 'random-weight pair qwen2-0.5B-shaped Q8_0 + its Q4_0 copy (--draft self)',
          target: makeBenchModel('0.5b', 'Q8_0', log),
          draft: 'self',
          fim: false,
          prefixChars: 600,
          suffixChars: 0,
          ctx: 1024,
          prompts: 3,
          maxTokens: 64,
        };
      }
      if (!pair) continue;
      log(`speculative: ${pair.label}`);
      const promptDir = join(repoRoot, 'bench-results', 'prompts');
      const rows = await benchSpecPair(pair, specOpts, promptDir);
      results.spec.push({ pair, rows });
      report.push(specTable(pair, rows));
      log(report.at(-1)!);
      save();
      // A random-weight model's output owes nothing to the other open files.
      if (p === 'random') continue;
      log(`lookup over another open file: ${pair.label}`);
      const corpus = benchCorpus(pair, specOpts, promptDir);
      results.spec[results.spec.length - 1]!.corpus = corpus;
      report.push(corpusTable(pair, corpus));
      log(report.at(-1)!);
      save();
    }
  }

  results.machine.loadavg_at_end = readFileSync('/proc/loadavg', 'utf8').trim();
  save();
  const header = [
    `# Leapfrog benchmark ${results.date}`,
    `machine: ${results.machine.cpu}, ${results.machine.nproc} CPUs, load average at start ${results.machine.loadavg_at_start}, at end ${results.machine.loadavg_at_end}`,
    `command: ${results.command}`,
    ...results.skipped.map((s) => `skipped: ${s}`),
  ];
  console.log([...header, '', ...report.flatMap((r) => [r, ''])].join('\n'));
  console.log(`JSON: ${outFile}`);
}

main().then(
  () => process.exit(0),
  (e: unknown) => {
    console.error(e);
    process.exit(1);
  },
);
