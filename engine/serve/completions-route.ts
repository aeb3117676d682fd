// POST /v1/completions. `prompt` alone: plain continuation, tokenized as `leapfrog generate`
// does, decoded with the engine's table of defaults (greedy unless the request samples).
// With `suffix` (as Ollama accepts it): fill-in-the-middle through the model's FIM template,
// with the completion preset the extension's ghost text uses.
import type { ServerResponse } from 'node:http';
import { GENERATION_DEFAULTS } from '../protocol';
import { COMPLETION_OVERRIDES, type GenerationOverrides } from '../generation/generation-config';
import { openAiAsk } from './generation-ask';
import { completionPrompt, fimPrompt } from './prompts';
import { optionalBoolean, optionalString, type JsonObject } from './request-fields';
import { completionBody, completionChunk, responseHead, usageChunk, usageOf } from './responses';
import { paramsFor, runGeneration, tokenBudget, type RunNote } from './run-request';
import type { ServeEngine } from './serve-engine';
import { badField } from './api-error';

/** Plain continuation: nothing over the table of defaults (as `leapfrog generate`). */
const PLAIN_OVERRIDES: GenerationOverrides = {};

/** Names a repository-level FIM template shows when the request gives none (llama.cpp's). */
export const DEFAULT_REPO_NAME = 'myproject';
export const DEFAULT_FILE_PATH = 'filename';

export async function completionsRoute(
  serve: ServeEngine,
  body: JsonObject,
  res: ServerResponse,
): Promise<RunNote> {
  const ready = serve.whenServing();
  const ask = openAiAsk(body, 'completion');
  const suffix = optionalString(body, 'suffix');
  const fallback = GENERATION_DEFAULTS.maxTokens;
  let prompt: number[];
  let maxTokens: number;
  let preset: GenerationOverrides;
  if (suffix === undefined) {
    if (body.prompt === undefined) throw badField('prompt', "'prompt' is required");
    prompt = completionPrompt(ready.engine, body.prompt);
    maxTokens = tokenBudget(ready, prompt.length, ask.maxTokens, fallback);
    preset = PLAIN_OVERRIDES;
  } else {
    const prefix = body.prompt === undefined ? '' : optionalString(body, 'prompt');
    if (prefix === undefined) throw badField('prompt', "with 'suffix', 'prompt' must be a string");
    const reserve = Math.min(ask.maxTokens ?? fallback, Math.floor(ready.engine.nCtx / 2));
    prompt = fimPrompt(
      ready.engine,
      { prefix, suffix, extra: [], repoName: DEFAULT_REPO_NAME, filePath: DEFAULT_FILE_PATH },
      reserve,
    ).prompt;
    maxTokens = tokenBudget(ready, prompt.length, undefined, ask.maxTokens ?? fallback);
    preset = COMPLETION_OVERRIDES;
  }
  const withTokens = optionalBoolean(body, 'return_tokens') ?? false;
  const head = responseHead('cmpl', ready.modelId);
  return runGeneration(ready, res, {
    prompt,
    params: paramsFor(serve, preset, ask, maxTokens),
    stop: ask.stop,
    stream: ask.stream,
    shape: {
      body: (r) => completionBody(head, prompt.length, r, withTokens),
      delta: (text) => completionChunk(head, text, null),
      closing: (r) => [
        completionChunk(head, '', r.finishReason),
        ...(ask.includeUsage
          ? [usageChunk(head, 'text_completion', usageOf(prompt.length, r))]
          : []),
      ],
      doneMarker: true,
    },
  });
}
