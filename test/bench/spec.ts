// Speculative section (issue 5): tokens/s and accepted tokens per target pass for
// --spec off | ngram | draft | auto, budgets 4/8/16/32 (fixed: --fixed-budget) and the
// adaptive controller, on code-completion prompts cut from real source files, through the
// product's CLI (node bin/leapfrog.js generate --prompt-file F --json); side by side with
// llama.cpp's own speculative decoding (node-llama-cpp's DraftSequenceTokenPredictor for a
// draft model, InputLookupTokenPredictor for lookup) on the same pair.
//
// Prompts: FIM (<|fim_prefix|>prefix<|fim_suffix|>suffix<|fim_middle|>) for a model whose
// vocabulary has those tokens (Qwen2.5-Coder, the bundled pair); plain prefix text
// otherwise (stories260K, a 512-token SentencePiece vocabulary: mechanics only).
//
// Lookup over the open files (benchCorpus): the same measurement on prompts cut from a source
// file, once alone and once with its unit test as the lookup corpus (`--corpus-file`, what
// the completion passes as GenerateParams.corpus from the other open files' chunks).
// Acceptance (tokens per target pass, drafted, accepted) is the figure; it does not depend on
// the machine's speed, only on the drafter's policy and the budget controller.
import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { cliPath, repoRoot } from '../support/paths';
import { getLlama } from './engines';
import { median } from './cpu';

export interface SpecPair {
  label: string;
  target: string;
  draft?: string;
  fim: boolean;
  /** Prompt size in characters (prefix, suffix). */
  prefixChars: number;
  suffixChars: number;
  ctx?: number;
  /** Fewer prompts or tokens than the run's options (a slow pair). */
  prompts?: number;
  maxTokens?: number;
}

export interface SpecOptions {
  threads: number;
  llamaThreads: number;
  reps: number;
  budgets: number[];
  modes: ('off' | 'ngram' | 'draft' | 'auto')[];
  prompts: number;
  maxTokens: number;
  llama: boolean;
  log: (s: string) => void;
}

export interface SpecRow {
  engine: 'leapfrog' | 'llama.cpp';
  mode: string;
  budget: number | 'adaptive' | null;
  tokens_per_second: number;
  accepted_per_pass: number | null;
  generated: number;
  passes: number | null;
  per_prompt: { tps: number; per_pass: number | null }[];
  speedup_vs_off?: number;
  note?: string;
}

/** Source files the prompts are cut from (this repository's own code, and a library's). */
const SOURCES = [
  'engine/completion/completion-service.ts',
  'native/src/spec/speculative.cpp',
  'engine/scheduler/scheduler.ts',
  'native/src/engine/session.cpp',
  'node_modules/vscode-languageserver/lib/common/server.js',
  'engine/cli/generate.ts',
];

/**
 * Source files and their unit tests: the test repeats the source's identifiers and calls,
 * as another open file does while one writes the code it tests.
 */
const CORPUS_CASES: { source: string; corpus: string }[] = [
  { source: 'engine/completion/extra-context.ts', corpus: 'test/unit/extra-context.test.ts' },
  { source: 'engine/completion/fim-template.ts', corpus: 'test/unit/fim-template.test.ts' },
  { source: 'engine/scheduler/scheduler.ts', corpus: 'test/unit/scheduler.test.ts' },
  { source: 'engine/completion/postprocess.ts', corpus: 'test/unit/postprocess.test.ts' },
  { source: 'engine/completion/context-window.ts', corpus: 'test/unit/context-window.test.ts' },
  { source: 'engine/chat/chat-template.ts', corpus: 'test/unit/chat-template.test.ts' },
];

/** Cuts `count` completion prompts: the cursor at a line start two thirds into the file. */
export function cutPrompts(
  pair: SpecPair,
  count: number,
  dir: string,
  sources: readonly string[] = SOURCES,
): string[] {
  mkdirSync(dir, { recursive: true });
  const files: string[] = [];
  for (let i = 0; i < count; i++) {
    const src = sources[i % sources.length]!;
    const text = readFileSync(join(repoRoot, src), 'utf8');
    let cursor = Math.floor((text.length * (2 + (i % 3))) / 5);
    cursor = text.lastIndexOf('\n', cursor) + 1;
    const prefix = text.slice(Math.max(0, cursor - pair.prefixChars), cursor);
    // The suffix starts a few lines below: the middle is what the model should write.
    let after = cursor;
    for (let k = 0; k < 6; k++) after = text.indexOf('\n', after) + 1 || text.length;
    const suffix = text.slice(after, after + pair.suffixChars);
    const prompt = pair.fim
      ? `<|fim_prefix|>${prefix}<|fim_suffix|>${suffix}<|fim_middle|>`
      : prefix;
    const f = join(dir, `${pair.label.replace(/\W+/g, '_')}-${src.replace(/\W+/g, '_')}-${i}.txt`);
    writeFileSync(f, prompt);
    files.push(f);
  }
  return files;
}

interface CliStats {
  generated: number;
  target_passes: number;
  drafted: number;
  accepted: number;
  accepted_per_pass: number;
  tokens_per_second: number;
}

function runCli(
  pair: SpecPair,
  prompt: string,
  mode: string,
  budget: number | 'adaptive',
  o: SpecOptions,
  corpus?: string,
): CliStats & { tokens: number[] } {
  const args = [
    cliPath,
    'generate',
    '--model',
    pair.target,
    '--prompt-file',
    prompt,
    '--spec',
    mode,
    '--max-tokens',
    String(pair.maxTokens ?? o.maxTokens),
    '--threads',
    String(o.threads),
    '--json',
  ];
  if (pair.draft && (mode === 'draft' || mode === 'auto')) args.push('--draft', pair.draft);
  if (mode !== 'off') {
    args.push('--budget', String(budget === 'adaptive' ? 16 : budget));
    if (budget !== 'adaptive') args.push('--fixed-budget');
  }
  if (pair.ctx) args.push('--ctx', String(pair.ctx));
  if (corpus) args.push('--corpus-file', corpus);
  const out = execFileSync(process.execPath, args, { encoding: 'utf8', maxBuffer: 64 << 20 });
  const j = JSON.parse(out.trim().split('\n').at(-1)!) as { stats: CliStats; tokens: number[] };
  return { ...j.stats, tokens: j.tokens };
}

async function llamaSpec(
  pair: SpecPair,
  prompts: string[],
  mode: 'off' | 'ngram' | 'draft',
  budget: number,
  o: SpecOptions,
): Promise<SpecRow> {
  const { nlc, llama } = await getLlama();
  const model = await llama.loadModel({ modelPath: pair.target, gpuLayers: 0 });
  const draftModel =
    mode === 'draft' && pair.draft
      ? await llama.loadModel({ modelPath: pair.draft, gpuLayers: 0 })
      : undefined;
  const contextSize = pair.ctx ?? 2048;
  const ctx = await model.createContext({
    contextSize,
    batchSize: 512,
    sequences: 1,
    flashAttention: false,
    threads: o.llamaThreads,
  });
  const dctx = draftModel
    ? await draftModel.createContext({
        contextSize,
        batchSize: 512,
        sequences: 1,
        flashAttention: false,
        threads: o.llamaThreads,
      })
    : undefined;
  const per: { tps: number; per_pass: number | null }[] = [];
  let generated = 0;
  let validated = 0;
  let refuted = 0;
  try {
    for (const p of prompts) {
      const samples: number[] = [];
      for (let r = 0; r < o.reps; r++) {
        const draftSeq = mode === 'draft' && dctx ? dctx.getSequence() : undefined;
        const predictor = draftSeq
          ? new nlc.DraftSequenceTokenPredictor(draftSeq, { maxTokens: budget, minTokens: 0 })
          : mode === 'ngram'
            ? new nlc.InputLookupTokenPredictor({
                patternLength: { min: 2 },
                predictionLength: { max: budget },
              })
            : undefined;
        const seq = ctx.getSequence(predictor ? { tokenPredictor: predictor } : undefined);
        const ids = model.tokenize(readFileSync(p, 'utf8'), pair.fim);
        if (model.tokens.shouldPrependBosToken && model.tokens.bos != null)
          ids.unshift(model.tokens.bos);
        let t0 = 0;
        let k = 0;
        for await (const tok of seq.evaluate(ids, { temperature: 0 })) {
          if (k === 0) t0 = performance.now();
          k++;
          if (k > (pair.maxTokens ?? o.maxTokens) || model.isEogToken(tok)) break;
        }
        const ms = performance.now() - t0;
        samples.push(((k - 1) * 1000) / ms);
        generated = k - 1;
        if (r === 0) {
          validated += seq.tokenPredictions.validated;
          refuted += seq.tokenPredictions.refuted;
        }
        await seq.dispose();
        if (draftSeq && !draftSeq.disposed) await draftSeq.dispose();
      }
      per.push({ tps: median(samples), per_pass: null });
    }
  } finally {
    await dctx?.dispose();
    await ctx.dispose();
    await draftModel?.dispose();
    await model.dispose();
  }
  return {
    engine: 'llama.cpp',
    mode,
    budget: mode === 'off' ? null : budget,
    tokens_per_second: median(per.map((x) => x.tps)),
    accepted_per_pass: null,
    generated,
    passes: null,
    per_prompt: per,
    note:
      mode === 'off'
        ? undefined
        : `predictions validated ${validated}, refuted ${refuted} (all prompts)`,
  };
}

export async function benchSpecPair(
  pair: SpecPair,
  o: SpecOptions,
  workDir: string,
): Promise<SpecRow[]> {
  const prompts = cutPrompts(pair, Math.min(o.prompts, pair.prompts ?? o.prompts), workDir);
  const rows: SpecRow[] = [];
  const configs: { mode: string; budget: number | 'adaptive' | null }[] = [];
  for (const mode of o.modes) {
    if (mode === 'off') configs.push({ mode, budget: null });
    else {
      if ((mode === 'draft' || mode === 'auto') && !pair.draft && mode === 'draft') continue;
      for (const b of o.budgets) configs.push({ mode, budget: b });
      configs.push({ mode, budget: 'adaptive' });
    }
  }
  // Every configuration of a prompt runs back to back, repetition by repetition, so that a
  // ratio to --spec off compares runs seconds apart. Run configuration by configuration, the
  // section divided one minute's speed by another's: this VM's passes drift by a fifth within
  // minutes, and one such run put `auto` at 0.65–0.85x `ngram` on every prompt where runs of
  // the two in turns put them level (BENCHMARKS.md, session 28).
  type Sample = { tps: number[]; pp: number[]; generated: number; passes: number };
  const samples = configs.map(() =>
    prompts.map((): Sample => ({ tps: [], pp: [], generated: 0, passes: 0 })),
  );
  const mismatch = configs.map(() => 0);
  const reference: number[][] = [];
  for (let r = 0; r < o.reps; r++) {
    for (const [pi, p] of prompts.entries()) {
      for (const [ci, c] of configs.entries()) {
        const s = runCli(pair, p, c.mode, c.budget ?? 'adaptive', o);
        const x = samples[ci]![pi]!;
        x.tps.push(s.tokens_per_second);
        x.pp.push(s.accepted_per_pass);
        if (r > 0) continue;
        x.generated = s.generated;
        x.passes = s.target_passes;
        if (c.mode === 'off') reference[pi] = s.tokens;
        else if (reference[pi] && s.tokens.join(',') !== reference[pi]!.join(',')) mismatch[ci]++;
      }
    }
  }
  let offTps = NaN;
  for (const [ci, c] of configs.entries()) {
    const per = samples[ci]!.map((x) => ({ tps: median(x.tps), per_pass: median(x.pp) }));
    const generated = samples[ci]!.reduce((a, x) => a + x.generated, 0);
    const passes = samples[ci]!.reduce((a, x) => a + x.passes, 0);
    const row: SpecRow = {
      engine: 'leapfrog',
      mode: c.mode,
      budget: c.budget,
      tokens_per_second: median(per.map((x) => x.tps)),
      accepted_per_pass: passes ? generated / passes : null,
      generated,
      passes,
      per_prompt: per,
    };
    if (mismatch[ci])
      row.note = `greedy output differs from --spec off on ${mismatch[ci]} prompt(s)`;
    if (c.mode === 'off') offTps = row.tokens_per_second;
    row.speedup_vs_off = row.tokens_per_second / offTps;
    rows.push(row);
    o.log(
      `  leapfrog ${c.mode} ${c.budget ?? ''}: ${row.tokens_per_second.toFixed(1)} t/s, ${row.accepted_per_pass?.toFixed(2)} tokens/pass${row.note ? ` (${row.note})` : ''}`,
    );
  }
  if (o.llama) {
    const lmodes: ('off' | 'ngram' | 'draft')[] = [
      'off',
      'ngram',
      // `--draft self` is Leapfrog's own Q4_0 copy: llama.cpp gets no draft file for it.
      ...(pair.draft && pair.draft !== 'self' ? (['draft'] as const) : []),
    ];
    let llamaOff = NaN;
    for (const m of lmodes) {
      for (const b of m === 'off' ? [0] : o.budgets) {
        try {
          const row = await llamaSpec(pair, prompts, m, b, o);
          if (m === 'off') llamaOff = row.tokens_per_second;
          row.speedup_vs_off = row.tokens_per_second / llamaOff;
          rows.push(row);
          o.log(
            `  llama.cpp ${m} ${m === 'off' ? '' : b}: ${row.tokens_per_second.toFixed(1)} t/s`,
          );
        } catch (e) {
          o.log(`  llama.cpp ${m} ${b}: ${(e as Error).message}`);
          rows.push({
            engine: 'llama.cpp',
            mode: m,
            budget: b,
            tokens_per_second: NaN,
            accepted_per_pass: null,
            generated: 0,
            passes: null,
            per_prompt: [],
            note: (e as Error).message,
          });
        }
      }
    }
  }
  return rows;
}

export interface CorpusRow {
  mode: string;
  corpus: boolean;
  generated: number;
  passes: number;
  drafted: number;
  accepted: number;
  /** Tokens produced per target pass, over all prompts. */
  tokens_per_pass: number;
  note?: string;
}

/**
 * Acceptance with and without the lookup corpus, `--spec ngram` and (with a draft) `auto`,
 * adaptive budget, on prompts cut from sources whose unit test is the corpus. Greedy output
 * must not change with the corpus (speculation is exact).
 */
export function benchCorpus(pair: SpecPair, o: SpecOptions, workDir: string): CorpusRow[] {
  const count = Math.max(o.prompts, CORPUS_CASES.length);
  const cases = CORPUS_CASES.map((c) => c.source);
  const prompts = cutPrompts(pair, count, workDir, cases);
  const corpusOf = (i: number) => join(repoRoot, CORPUS_CASES[i % CORPUS_CASES.length]!.corpus);
  const rows: CorpusRow[] = [];
  for (const mode of pair.draft ? ['ngram', 'auto'] : ['ngram']) {
    const without: number[][] = [];
    for (const corpus of [false, true]) {
      const row: CorpusRow = {
        mode,
        corpus,
        generated: 0,
        passes: 0,
        drafted: 0,
        accepted: 0,
        tokens_per_pass: 0,
      };
      let mismatch = 0;
      for (const [i, p] of prompts.entries()) {
        const s = runCli(pair, p, mode, 'adaptive', o, corpus ? corpusOf(i) : undefined);
        row.generated += s.generated;
        row.passes += s.target_passes;
        row.drafted += s.drafted;
        row.accepted += s.accepted;
        if (!corpus) without[i] = s.tokens;
        else if (s.tokens.join(',') !== without[i]!.join(',')) mismatch++;
      }
      row.tokens_per_pass = row.passes ? row.generated / row.passes : 0;
      if (mismatch) row.note = `greedy output differs without the corpus on ${mismatch} prompt(s)`;
      rows.push(row);
      o.log(
        `  corpus ${corpus ? 'on ' : 'off'} ${mode}: ${row.tokens_per_pass.toFixed(2)} tokens/pass, ` +
          `drafted ${row.drafted}, accepted ${row.accepted}${row.note ? ` (${row.note})` : ''}`,
      );
    }
  }
  return rows;
}

export function corpusTable(pair: SpecPair, rows: CorpusRow[]): string {
  const lines = [
    `**${pair.label}** — lookup over another open file (the source's unit test as corpus), adaptive budget`,
    '',
    '| --spec | corpus | tokens / target pass | drafted | accepted | acceptance | note |',
    '|---|---|---:|---:|---:|---:|---|',
  ];
  for (const r of rows) {
    const rate = r.drafted ? `${((100 * r.accepted) / r.drafted).toFixed(0)} %` : '—';
    lines.push(
      `| ${r.mode} | ${r.corpus ? 'test file' : 'none'} | ${r.tokens_per_pass.toFixed(2)} | ${r.drafted} | ${r.accepted} | ${rate} | ${r.note ?? ''} |`,
    );
  }
  return lines.join('\n');
}

export function specTable(pair: SpecPair, rows: SpecRow[]): string {
  const lines = [
    `**${pair.label}** — target ${pair.target.replace(/.*\/(data|models|test)\//, '$1/')}, draft ${pair.draft ? pair.draft.replace(/.*\/(data|models|test)\//, '$1/') : 'none'}${pair.fim ? ', FIM prompts' : ', plain-prefix prompts'}`,
    '',
    '| engine | --spec | budget | tokens/s (median over prompts) | × --spec off | accepted tokens / target pass | note |',
    '|---|---|---:|---:|---:|---:|---|',
  ];
  for (const r of rows) {
    lines.push(
      `| ${r.engine} | ${r.mode} | ${r.budget ?? '—'} | ${Number.isFinite(r.tokens_per_second) ? r.tokens_per_second.toFixed(1) : '—'} | ${r.speedup_vs_off && Number.isFinite(r.speedup_vs_off) ? r.speedup_vs_off.toFixed(2) + '×' : '—'} | ${r.accepted_per_pass == null ? '—' : r.accepted_per_pass.toFixed(2)} | ${r.note ?? ''} |`,
    );
  }
  return lines.join('\n');
}
