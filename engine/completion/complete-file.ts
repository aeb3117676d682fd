// `leapfrog complete`: the ghost text for a file and cursor, through the very path the
// language server's inline completion takes (engine core → CompletionService), with the
// generation settings the sidecar would have.
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { createEngineCore } from '../server/engine-core';
import type { LoadRequest } from '../models/model-host';
import type { GenerationSettings } from '../generation/generation-config';
import { promptPath } from './completion-service';
import { repoNameFor } from './repo-name';

export async function completeFile(
  opts: LoadRequest & {
    settings: GenerationSettings;
    file: string;
    line: number;
    character: number;
    maxTokens?: number;
  },
): Promise<{ text: string; stats: Record<string, number> }> {
  const file = resolve(opts.file);
  const text = readFileSync(file, 'utf8');
  const core = createEngineCore({ threads: opts.threads, settings: opts.settings });
  // No deadline: the command line waits for the whole suggestion (an answer at the deadline
  // suits an editor, where the rest follows as the user types; a script wants the whole text).
  core.completions.deadlineMs = 0;
  try {
    await core.host.load(opts);
    const call = core.completions.complete({
      uri: pathToFileURL(file).href,
      path: promptPath(file),
      repoName: repoNameFor(file),
      text,
      line: opts.line,
      character: opts.character,
      maxTokens: opts.maxTokens,
    });
    const result = await call.result;
    if (result.status !== 'ok') throw new Error(`completion was ${result.status}`);
    return { text: result.text, stats: result.stats };
  } finally {
    await core.shutdown();
  }
}
