// Benchmark (not a test): completion latency while typing through a ~2,000-token file,
// p50/p95, with and without KV-prefix reuse. Runs the engine in-process through the same
// CompletionService the server uses (LSP framing adds well under a millisecond).
// "Without reuse" runs a one-token generation on an unrelated prompt between requests
// (untimed), so the session's KV cache no longer shares a prefix with the next prompt.
//
//   npx tsx test/bench/completion-latency.ts [--model F] [--draft F] [--file F]
//       [--threads N] [--every CHARS] [--requests N] [--out results.json]
import { readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { createEngineCore } from '../../engine/server/engine-core';
import { resolveModelPaths } from '../../engine/models/model-paths';
import { GENERATION_DEFAULTS } from '../../engine/protocol';
import {
  COMPLETION_OVERRIDES,
  buildGenerateParams,
  mergeOverrides,
} from '../../engine/generation/generation-config';
import { arg, percentile } from './script-args';

async function main(): Promise<void> {
  const file = resolve(
    arg('file', join(__dirname, '..', '..', 'engine', 'scheduler', 'scheduler.ts'))!,
  );
  const text = readFileSync(file, 'utf8');
  const every = Number(arg('every', '40'));
  const maxRequests = Number(arg('requests', '100'));
  const threads = arg('threads') ? Number(arg('threads')) : undefined;
  const core = createEngineCore({ threads });
  const engine = await core.host.load(
    resolveModelPaths({ model: arg('model'), draft: arg('draft') }),
  );
  const fileTokens = engine.target.tokenize(text, false, false).length;
  const uri = pathToFileURL(file).href;

  // Cursor positions: every `every` characters, at most `maxRequests` of them.
  const stops: number[] = [];
  for (let p = every; p < text.length && stops.length < maxRequests; p += every) stops.push(p);

  const evict = async () => {
    const params = buildGenerateParams(
      GENERATION_DEFAULTS,
      core.settings,
      mergeOverrides(COMPLETION_OVERRIDES, { maxTokens: 1, speculation: { mode: 'off' } }),
    );
    const bos = engine.info.bos >= 0 ? [engine.info.bos] : [];
    await engine.completionSession.generate(
      [...bos, ...engine.target.tokenize('unrelated', false, false)],
      params,
      () => {},
    ).done;
  };

  const results: Record<
    string,
    { p50: number; p95: number; mean: number; reusedTokens: number; promptTokens: number }
  > = {};
  let growing: Promise<boolean> | undefined;
  for (const mode of ['reuse', 'no-reuse'] as const) {
    core.completions.typedAhead.forget(uri);
    const ms: number[] = [];
    let reused = 0;
    let prompt = 0;
    for (const p of stops) {
      // The user has typed text[0:p]; the document is that much of the file.
      const doc = text.slice(0, p);
      const lines = doc.split('\n');
      if (mode === 'no-reuse') {
        await growing;
        await evict();
      }
      core.completions.typedAhead.forget(uri); // measure the model, not the cache
      const t0 = performance.now();
      const r = await core.completions.complete({
        uri,
        path: 'bench.ts',
        repoName: 'bench',
        text: doc,
        line: lines.length - 1,
        character: lines[lines.length - 1].length,
      }).result;
      ms.push(performance.now() - t0);
      // A partial answer keeps growing in the background on the completion session; the
      // eviction runs on that session, so it waits for the growth to end (untimed).
      growing = r.status === 'ok' ? r.grown : undefined;
      if (r.status === 'ok') {
        reused += r.stats.reused_tokens ?? 0;
        prompt += r.stats.prompt_tokens ?? 0;
      }
    }
    results[mode] = {
      p50: percentile(ms, 50),
      p95: percentile(ms, 95),
      mean: ms.reduce((a, b) => a + b, 0) / ms.length,
      reusedTokens: reused / stops.length,
      promptTokens: prompt / stops.length,
    };
  }
  await core.shutdown();

  console.log(
    `completion latency: ${file} (${fileTokens} tokens), ${stops.length} requests, model ${engine.paths.model}`,
  );
  console.log('mode      |   p50 ms |   p95 ms |  mean ms | prompt tok | reused tok');
  for (const [mode, r] of Object.entries(results)) {
    console.log(
      `${mode.padEnd(9)} | ${r.p50.toFixed(1).padStart(8)} | ${r.p95.toFixed(1).padStart(8)} | ${r.mean.toFixed(1).padStart(8)} | ` +
        `${r.promptTokens.toFixed(0).padStart(10)} | ${r.reusedTokens.toFixed(0).padStart(10)}`,
    );
  }
  const out = arg('out');
  if (out) {
    writeFileSync(
      out,
      JSON.stringify(
        {
          file,
          fileTokens,
          requests: stops.length,
          model: engine.paths.model,
          date: new Date().toISOString(),
          results,
        },
        null,
        2,
      ),
    );
  }
}

main().catch((e: unknown) => {
  console.error(`completion-latency: ${e instanceof Error ? e.message : String(e)}`);
  process.exit(1);
});
