// Benchmark (not a test): keystroke → ghost text in the real editor. code-server + Chromium
// (the e2e harness) with the extension and a model, a scripted typing session in a real
// source file of this repository, in one stretch of it as a person works: at each of N places
// (lines of that stretch, bottom first), a new line (Enter), a few characters of the line that
// follows in the original typed at 110 ms a key, a pause, and on every other place Tab to
// accept. Before typing, the engine reads the file (the prefetch on focus) until it is idle. The page itself timestamps every key (keydown, capture phase) and every
// change of the ghost text (a MutationObserver on the workbench), so the figures are what a
// person sees, Chromium's rendering included. At the end the extension reports how long its
// host's event loop was blocked ("Leapfrog: Report Extension Host Responsiveness").
//
//   npx tsx test/bench/editor-latency.ts [--model F] [--draft F] [--threads N] [--file F]
//       [--places N] [--pause-ms MS] [--completions off] [--diagnose DIR [--cpu-profile]]
//       [--out results.json]
// `--completions off` runs the same session with ghost text switched off: the extension
// host's event-loop figures without Leapfrog's completions, to compare against.
// `--diagnose DIR` logs each stall of the extension host over the typing session with whether
// its thread ran or waited for a CPU, and every GC pause (DIR/exthost-1.json; exthost-0 is the
// start-up); with `--cpu-profile` also a CPU profile (DIR/exthost-1.cpuprofile:
// `node scripts/profile-blocks.mjs` lists each block and what ran in it).
//
// Latency of a measured key: from its keydown to the first moment after it that ghost text
// is shown. "none": no ghost text before the next key (or within the pause).
import { mkdirSync, readFileSync } from 'node:fs';
import { basename, join, resolve } from 'node:path';
import {
  launch,
  openFile,
  root,
  runCommand,
  skipReason,
  sleep,
  waitReady,
  type Session,
} from '../e2e/harness';
import type { DiagnosticsLog } from '../../extension/exthost-diagnostics';
import { arg, percentile, writeOut } from './script-args';

const KEY_MS = 110;

// Runs in the page (a string: this file is type-checked without the DOM library).
const INSTRUMENT = `(() => {
  const lf = (window.__lf = { keys: [], ghosts: [], mark: '' });
  document.addEventListener('keydown', (e) => {
    lf.keys.push({ t: performance.now(), key: e.key, mark: lf.mark });
    lf.mark = '';
  }, true);
  const read = () => [...document.querySelectorAll('.ghost-text-decoration, .ghost-text .view-line')]
    .map((e) => e.textContent || '').join('\\n').trim();
  let last = read();
  new MutationObserver(() => {
    const g = read();
    if (g !== last) { last = g; lf.ghosts.push({ t: performance.now(), shown: g.length > 0 }); }
  }).observe(document.querySelector('.monaco-workbench'),
    { subtree: true, childList: true, characterData: true });
})()`;

interface KeyEvent {
  t: number;
  key: string;
  mark: string;
}
interface GhostEvent {
  t: number;
  shown: boolean;
}

async function markNext(s: Session, label: string): Promise<void> {
  await s.page.evaluate(`window.__lf.mark = ${JSON.stringify(label)}`);
}

async function gotoLineEnd(s: Session, line: number): Promise<void> {
  await s.page.keyboard.press('Control+G');
  await s.page.locator('.quick-input-widget input').waitFor();
  await s.page.keyboard.type(String(line));
  await s.page.keyboard.press('Enter');
  await s.page.keyboard.press('End');
  await sleep(300);
}

/** Until the status bar has said "ready" (not busy) for a second, at most three minutes. */
async function waitIdle(s: Session): Promise<void> {
  const item = s.page.locator('[id="leapfrog.leapfrog.leapfrog.status"]');
  const deadline = Date.now() + 180_000;
  let readySince = 0;
  while (Date.now() < deadline) {
    const label = (await item.getAttribute('aria-label').catch(() => '')) ?? '';
    if (/Leapfrog ready/.test(label)) {
      readySince ||= Date.now();
      if (Date.now() - readySince > 1000) return;
    } else readySince = 0;
    await sleep(200);
  }
}

/**
 * The typing session's stalls (written at its report), the instrumentation's own left out,
 * each with the key pressed last before it began (`keys` in wall-clock ms).
 */
function stallSummary(file: string, keys: { wall: number; key: string }[]): unknown {
  const log = JSON.parse(readFileSync(file, 'utf8')) as DiagnosticsLog;
  const stalls = log.stalls.filter((x) => !x.whileSaving);
  return {
    over30ms: stalls.length,
    over50ms: stalls.filter((x) => x.lateMs > 50).length,
    worst: stalls
      .sort((a, b) => b.lateMs - a.lateMs)
      .slice(0, 5)
      .map((x) => {
        const began = x.wall - x.lateMs - 10;
        const key = keys.filter((k) => k.wall <= began).at(-1);
        return { ...x, afterKey: key ? `${key.key} +${Math.round(began - key.wall)} ms` : '-' };
      }),
    longestGcMs: Math.max(0, ...log.gcs.map((g) => g.ms)),
  };
}

async function main(): Promise<void> {
  const why = skipReason();
  if (why) {
    console.log(`SKIP editor latency: ${why}`);
    return;
  }
  const source = resolve(arg('file', join(root, 'engine', 'completion', 'postprocess.ts'))!);
  const name = basename(source);
  const text = readFileSync(source, 'utf8');
  const lines = text.split('\n');
  const places = Number(arg('places', '12'));
  const PAUSE_MS = Number(arg('pause-ms', '1600'));
  const model = arg('model');
  const settings: Record<string, unknown> = {
    'leapfrog.threads': Number(arg('threads', '2')),
    ...(model ? { 'leapfrog.model': resolve(model) } : {}),
    ...(arg('draft') !== undefined ? { 'leapfrog.draftModel': arg('draft') } : {}),
    ...(arg('completions') === 'off' ? { 'leapfrog.completion.enabled': false } : {}),
  };
  // Places: code lines followed by a code line, from the middle of the file on, bottom first
  // (an edit then never moves a place still to come).
  const candidates: number[] = [];
  for (let i = Math.floor(lines.length / 2); i + 1 < lines.length; i++) {
    const next = lines[i + 1]!.trim();
    if (lines[i]!.trim().length > 8 && next.length > 12 && !next.startsWith('//')) {
      candidates.push(i);
    }
  }
  const chosen = candidates.slice(0, places).reverse();
  const diagnoseDir = arg('diagnose');
  if (diagnoseDir) {
    mkdirSync(resolve(diagnoseDir), { recursive: true });
    process.env.LEAPFROG_DIAGNOSE_DIR = resolve(diagnoseDir); // code-server passes it on
    if (process.argv.includes('--cpu-profile')) process.env.LEAPFROG_DIAGNOSE_CPU = '1';
  }

  const s = await launch('editor-latency', { [name]: text }, settings);
  try {
    await waitReady(s.page, 180_000);
    await openFile(s.page, name);
    await gotoLineEnd(s, chosen[0]! + 1);
    // The model reads the file (the prefetch when the cursor rests) while the user reads it.
    await waitIdle(s);
    await runCommand(s.page, 'Leapfrog: Report Extension Host Responsiveness'); // starts over
    await sleep(500);
    await s.page.keyboard.press('Escape');
    await s.page.evaluate(INSTRUMENT);

    for (const [k, line] of chosen.entries()) {
      await gotoLineEnd(s, line + 1);
      await markNext(s, 'enter');
      await s.page.keyboard.press('Enter');
      await sleep(PAUSE_MS);
      const typed = lines[line + 1]!.trim().slice(0, 8);
      for (const [c, ch] of [...typed].entries()) {
        await markNext(s, c === typed.length - 1 ? 'last-key' : 'typing');
        await s.page.keyboard.type(ch);
        await sleep(KEY_MS);
      }
      await sleep(PAUSE_MS);
      if (k % 2 === 0) {
        await markNext(s, 'after-accept');
        await s.page.keyboard.press('Tab');
        await sleep(PAUSE_MS);
      }
      await s.page.keyboard.press('Escape');
    }

    const trace = (await s.page.evaluate('window.__lf')) as {
      keys: KeyEvent[];
      ghosts: GhostEvent[];
    };
    const pageOrigin = (await s.page.evaluate('performance.timeOrigin')) as number;
    await runCommand(s.page, 'Leapfrog: Report Extension Host Responsiveness');
    const note = s.page.locator('.notification-list-item-message', {
      hasText: 'extension host event loop',
    });
    await note.first().waitFor({ timeout: 10_000 });
    const loop = ((await note.first().textContent()) ?? '').trim();

    const byMark = new Map<string, { ms: number[]; none: number }>();
    trace.keys.forEach((key, i) => {
      if (!key.mark) return;
      const until = trace.keys[i + 1]?.t ?? Infinity;
      const g = trace.ghosts.find((e) => e.t > key.t && e.t < until && e.shown);
      const m = byMark.get(key.mark) ?? { ms: [], none: 0 };
      if (g) m.ms.push(g.t - key.t);
      else m.none++;
      byMark.set(key.mark, m);
    });
    const summary: Record<string, unknown> = {};
    const all: number[] = [];
    for (const [mark, m] of byMark) {
      if (mark !== 'typing') all.push(...m.ms);
      summary[mark] = {
        shown: m.ms.length,
        none: m.none,
        p50: Math.round(percentile(m.ms, 50)),
        p95: Math.round(percentile(m.ms, 95)),
      };
    }
    const result = {
      model: model ?? 'bundled',
      file: name,
      places: chosen.length,
      threads: settings['leapfrog.threads'],
      afterPause: {
        shown: all.length,
        p50: Math.round(percentile(all, 50)),
        p95: Math.round(percentile(all, 95)),
      },
      byKey: summary,
      eventLoop: loop,
      ...(diagnoseDir
        ? {
            stalls: stallSummary(
              join(resolve(diagnoseDir), 'exthost-1.json'),
              trace.keys.map((k) => ({ wall: pageOrigin + k.t, key: k.key })),
            ),
          }
        : {}),
    };
    console.log(JSON.stringify(result, null, 2));
    writeOut(result);
  } finally {
    await s.stop();
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
