// Benchmark (not a test): two VS Code windows on one machine each start their own sidecar.
// Do they share the model's memory? Starts two `leapfrog lsp` processes on the same model and
// reads each one's /proc/<pid>/smaps_rollup once both are ready: Rss counts shared pages in
// full for each process, Pss divides them between the sharers, so Pss ≈ Rss means nothing
// is shared.
//
//   npx tsx test/bench/two-windows.ts [--model F]
import { readFileSync } from 'node:fs';
import { settledStatus, startSidecar, testModel } from '../protocol/sidecar';
import { arg } from './script-args';

function rollup(pid: number): Record<string, number> {
  const out: Record<string, number> = {};
  for (const line of readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8').split('\n')) {
    const m = /^(\w+):\s+(\d+) kB/.exec(line);
    if (m) out[m[1]!] = Number(m[2]) / 1024;
  }
  return out;
}

async function main(): Promise<void> {
  const model = arg('model', testModel())!;
  const a = await startSidecar(['--model', model]);
  const b = await startSidecar(['--model', model]);
  try {
    for (const s of [a, b]) {
      const st = await settledStatus(s, 300_000);
      if (st.state !== 'ready') throw new Error(`model did not load: ${st.message}`);
    }
    const rows = [a, b].map((s) => {
      const r = rollup(s.child.pid!);
      const f = (k: string) => Math.round((r[k] ?? 0) * 10) / 10;
      return {
        pid: s.child.pid,
        rssMiB: f('Rss'),
        pssMiB: f('Pss'),
        sharedMiB: f('Shared_Clean') + f('Shared_Dirty'),
        privateMiB: f('Private_Clean') + f('Private_Dirty'),
      };
    });
    const total = (k: 'rssMiB' | 'pssMiB') => Math.round(rows.reduce((x, r) => x + r[k], 0));
    console.log(
      JSON.stringify(
        { model, sidecars: rows, totalRssMiB: total('rssMiB'), totalPssMiB: total('pssMiB') },
        null,
        2,
      ),
    );
  } finally {
    await a.stop();
    await b.stop();
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
