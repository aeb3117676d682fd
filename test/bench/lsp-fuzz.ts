// The long LSP fuzzing run (a benchmark-style run, not a test): generated hostile input
// against the real sidecar for a while, then a summary. `npm test` runs a short, fixed-seed
// version (test/protocol/lsp-fuzz.test.ts).
//
//   npx tsx test/bench/lsp-fuzz.ts [--minutes 10] [--seed S] [--framing 0.05]
//                                  [--kinds wrong-types,edits,...] [--model PATH]
//
// --framing is the share of bursts that break the framing (each costs a sidecar restart);
// --kinds runs only those burst kinds (see test/fuzz/hostile-input.ts). Exit code 1 when any
// burst left the sidecar crashed, hung or not answering; the seed and burst number replay it.
import { LspFuzzer } from '../fuzz/lsp-fuzzer';
import type { BurstKind } from '../fuzz/hostile-input';
import { skipReason, testModel } from '../protocol/sidecar';

function opt(name: string): string | undefined {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? process.argv[i + 1] : undefined;
}

async function main(): Promise<void> {
  const why = skipReason();
  if (why) {
    console.log(`lsp-fuzz: cannot run: ${why}`);
    process.exit(1);
  }
  const minutes = Number(opt('minutes') ?? '10');
  const seed = Number(opt('seed') ?? String(Date.now() % 1e9));
  const framing = Number(opt('framing') ?? '0.05');
  const kinds = opt('kinds')?.split(',') as BurstKind[] | undefined;
  const model = opt('model') ?? testModel();
  console.log(`lsp-fuzz: seed ${seed}, ${minutes} min, model ${model}`);
  const fuzzer = new LspFuzzer(seed, model);
  await fuzzer.start();
  const end = Date.now() + minutes * 60_000;
  let lastReport = Date.now();
  while (Date.now() < end) {
    const t = Date.now();
    const failure = kinds
      ? await fuzzer.run(fuzzer.input.burst(fuzzer.rng.pick(kinds)))
      : await fuzzer.runRandom(framing);
    if (process.argv.includes('--verbose')) {
      const s = fuzzer.summary;
      console.log(
        `  burst ${s.bursts}: ${Date.now() - t} ms${failure ? ` FAILED: ${failure}` : ''}`,
      );
    }
    if (failure) {
      console.log(`FAILED: ${failure}`);
      // A dead or wedged sidecar would fail every later burst: start a fresh one.
      await fuzzer.stop().catch(() => undefined);
      break;
    }
    if (Date.now() - lastReport > 60_000) {
      lastReport = Date.now();
      const s = fuzzer.summary;
      console.log(
        `  ${((Date.now() - (end - minutes * 60_000)) / 60_000).toFixed(1)} min: ${s.bursts} bursts, ${s.frames} frames`,
      );
    }
  }
  await fuzzer.stop();
  const s = fuzzer.summary;
  console.log(
    [
      `lsp-fuzz summary: seed ${s.seed}, ${(s.ms / 60_000).toFixed(1)} min`,
      `  bursts ${s.bursts}, frames ${s.frames}, ${(s.bytes / (1 << 20)).toFixed(1)} MiB written`,
      `  health checks ${s.healthChecks} (each: status + inlineCompletion answered), slowest ${s.slowestHealthMs} ms`,
      `  parse errors answered (-32700): ${s.parseErrorsAnswered}`,
      `  sidecars started: ${s.sidecarsStarted}`,
      `  by kind: ${JSON.stringify(s.byKind)}`,
      `  framing: ${JSON.stringify(s.framing)}`,
      `  failures: ${s.failures.length}`,
      ...s.failures.map((f) => `    ${f}`),
    ].join('\n'),
  );
  process.exit(s.failures.length ? 1 : 0);
}

void main();
