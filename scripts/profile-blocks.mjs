// Lists the event-loop blocks in a V8 CPU profile (.cpuprofile) and what ran in each: a block is
// a stretch of samples with no idle sample in it, at least --min-ms long. For each, the
// functions with the most self time and the outermost named frames (what started the work).
// Used with the editor-latency benchmark's `--profile DIR`.
//
//   node scripts/profile-blocks.mjs FILE.cpuprofile [--min-ms 30] [--top 8]
import { readFileSync } from 'node:fs';

const file = process.argv[2];
if (!file) {
  console.error('usage: node scripts/profile-blocks.mjs FILE.cpuprofile [--min-ms 30] [--top 8]');
  process.exit(2);
}
const option = (name, fallback) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? Number(process.argv[i + 1]) : fallback;
};
const minMs = option('min-ms', 30);
const top = option('top', 8);

const profile = JSON.parse(readFileSync(file, 'utf8'));
const byId = new Map(profile.nodes.map((n) => [n.id, n]));
const parent = new Map();
for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);

const frameName = (n) => {
  const f = n.callFrame;
  const where = f.url ? `${f.url.split('/').slice(-2).join('/')}:${f.lineNumber + 1}` : '';
  return `${f.functionName || '(anonymous)'}${where ? ` ${where}` : ''}`;
};
const isIdle = (id) => byId.get(id).callFrame.functionName === '(idle)';

/** Outermost frames of a stack that have a URL, two deep (what the work was for). */
const origin = (id) => {
  const chain = [];
  for (let at = id; at !== undefined; at = parent.get(at)) chain.push(byId.get(at));
  const named = chain.reverse().filter((n) => n.callFrame.url);
  if (named.length === 0) return chain.at(-1) ? frameName(chain.at(-1)) : '?';
  return named.slice(0, 2).map(frameName).join(' > ');
};

// Sample times (ms from the profile's start).
const times = [];
let t = 0;
for (const d of profile.timeDeltas) times.push((t += d / 1000));

const blocks = [];
let start = -1;
for (let i = 0; i <= profile.samples.length; i++) {
  const busy = i < profile.samples.length && !isIdle(profile.samples[i]);
  if (busy && start < 0) start = i;
  if (!busy && start >= 0) {
    const ms = (times[i] ?? times.at(-1)) - times[start];
    if (ms >= minMs) blocks.push({ from: start, to: i, ms });
    start = -1;
  }
}

const tally = (from, to, key) => {
  const m = new Map();
  for (let i = from; i < to; i++) {
    const k = key(profile.samples[i]);
    m.set(k, (m.get(k) ?? 0) + ((times[i + 1] ?? times[i]) - times[i]));
  }
  return [...m].sort((a, b) => b[1] - a[1]).slice(0, top);
};

console.log(
  `${file}: ${(times.at(-1) / 1000).toFixed(1)} s profiled, ${blocks.length} blocks ≥ ${minMs} ms`,
);
for (const b of blocks.sort((x, y) => y.ms - x.ms)) {
  console.log(`\n— ${b.ms.toFixed(1)} ms at ${(times[b.from] / 1000).toFixed(2)} s`);
  console.log('  self time:');
  for (const [k, ms] of tally(b.from, b.to, (id) => frameName(byId.get(id)))) {
    console.log(`    ${ms.toFixed(1).padStart(6)} ms  ${k}`);
  }
  console.log('  started by:');
  for (const [k, ms] of tally(b.from, b.to, origin)) {
    console.log(`    ${ms.toFixed(1).padStart(6)} ms  ${k}`);
  }
}
