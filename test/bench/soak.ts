// Benchmark (not a test): an hour of scripted typing and chat against the real sidecar
// (test/protocol/soak-session.ts): RSS, heap and native sessions over time, and completion
// latency at the start against the end (first and last tenth of the run).
//
//   npx tsx test/bench/soak.ts [--minutes 60] [--model F] [--out results.json]
import { settledStatus, startSidecar, testModel } from '../protocol/sidecar';
import { soak } from '../protocol/soak-session';
import { arg, percentile, writeOut } from './script-args';

const MIB = 1024 * 1024;

async function main(): Promise<void> {
  const minutes = Number(arg('minutes', '60'));
  const model = arg('model', testModel())!;
  const s = await startSidecar(['--model', model]);
  try {
    const st = await settledStatus(s, 180_000);
    if (st.state !== 'ready') throw new Error(`model did not load: ${st.message}`);
    const durationMs = minutes * 60_000;
    const r = await soak(s, { durationMs });
    const tenth = durationMs / 10;
    const early = r.completions.filter((c) => c.atMs < tenth).map((c) => c.ms);
    const late = r.completions.filter((c) => c.atMs >= durationMs - tenth).map((c) => c.ms);
    const warm = r.samples.filter((x) => x.atMs >= tenth);
    const mib = (b: number) => Math.round((b / MIB) * 10) / 10;
    const result = {
      model,
      minutes,
      keystrokes: r.keystrokes,
      completionsAnswered: r.completions.length,
      completionsCancelled: r.cancelledCompletions,
      chatTurns: r.chatTurns,
      failedRequests: r.failedRequests.length,
      failures: r.failedRequests.slice(0, 20),
      latencyMs: {
        firstTenth: { p50: percentile(early, 50), p95: percentile(early, 95) },
        lastTenth: { p50: percentile(late, 50), p95: percentile(late, 95) },
      },
      rssMiB: {
        warm: mib(warm[0]?.rss ?? NaN),
        end: mib(warm.at(-1)?.rss ?? NaN),
        peak: mib(Math.max(...warm.map((x) => x.rss))),
      },
      heapUsedMiB: { warm: mib(warm[0]?.heapUsed ?? NaN), end: mib(warm.at(-1)?.heapUsed ?? NaN) },
      openSessions: [...new Set(r.samples.map((x) => x.openSessions))],
      samples: r.samples,
    };
    console.log(
      JSON.stringify({ ...result, samples: `${result.samples.length} samples` }, null, 2),
    );
    writeOut(result);
  } finally {
    await s.stop();
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
