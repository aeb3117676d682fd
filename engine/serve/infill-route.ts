// POST /infill, llama.cpp's fill-in-the-middle endpoint, so that its clients (llama.vscode,
// llama.vim) work unchanged: `input_prefix`, `input_suffix`, `input_extra` [{filename, text}]
// (other files, shown by repository-level templates), `prompt` (text typed on the cursor's
// line, appended to the prefix), `n_predict`, `stream`. Built by the model's FIM template
// and decoded with the completion preset (greedy), as `leapfrog complete` does; the prompt is
// fitted to the context (`truncated` says when it was). Leapfrog's extensions: `repo_name`
// and `file_path` for the template's repository and file names.
import type { ServerResponse } from 'node:http';
import { GENERATION_DEFAULTS } from '../protocol';
import { COMPLETION_OVERRIDES } from '../generation/generation-config';
import type { ExtraChunk } from '../completion/fim-template';
import { badField } from './api-error';
import { DEFAULT_FILE_PATH, DEFAULT_REPO_NAME } from './completions-route';
import { llamaCppAsk } from './generation-ask';
import { fimPrompt } from './prompts';
import { isObject, optionalString, type JsonObject } from './request-fields';
import { infillBody } from './responses';
import { paramsFor, runGeneration, tokenBudget, type RunNote } from './run-request';
import type { ServeEngine } from './serve-engine';

export async function infillRoute(
  serve: ServeEngine,
  body: JsonObject,
  res: ServerResponse,
): Promise<RunNote> {
  const ready = serve.whenServing();
  const ask = llamaCppAsk(body);
  const prefix =
    (optionalString(body, 'input_prefix') ?? '') + (optionalString(body, 'prompt') ?? '');
  const suffix = optionalString(body, 'input_suffix') ?? '';
  const extra = extraChunks(body.input_extra);
  const nCtx = ready.engine.nCtx;
  const reserve = Math.min(ask.maxTokens ?? GENERATION_DEFAULTS.maxTokens, Math.floor(nCtx / 2));
  const { prompt, truncated } = fimPrompt(
    ready.engine,
    {
      prefix,
      suffix,
      extra,
      repoName: optionalString(body, 'repo_name') ?? DEFAULT_REPO_NAME,
      filePath: optionalString(body, 'file_path') ?? DEFAULT_FILE_PATH,
    },
    reserve,
  );
  // n_predict -1 (or none): until the end of generation or of the context, as llama.cpp.
  const maxTokens = tokenBudget(ready, prompt.length, undefined, ask.maxTokens ?? nCtx);
  const model = ready.modelId;
  return runGeneration(ready, res, {
    prompt,
    params: paramsFor(serve, COMPLETION_OVERRIDES, ask, maxTokens),
    stop: ask.stop,
    stream: ask.stream,
    maxPredictMs: ask.maxPredictMs,
    shape: {
      body: (r) => infillBody(model, prompt.length, truncated, r),
      delta: (content) => ({ content, stop: false }),
      closing: (r) => [{ ...infillBody(model, prompt.length, truncated, r), content: '' }],
      doneMarker: false,
    },
  });
}

function extraChunks(value: unknown): ExtraChunk[] {
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value)) throw badField('input_extra', "'input_extra' must be an array");
  return value.map((c: unknown, i) => {
    const at = `input_extra[${i}]`;
    if (!isObject(c) || typeof c.text !== 'string') {
      throw badField(at, `${at} must be an object {"filename", "text"}`);
    }
    if (c.filename !== undefined && typeof c.filename !== 'string') {
      throw badField(`${at}.filename`, `${at}.filename must be a string`);
    }
    return { path: (c.filename as string | undefined) ?? 'tmp', text: c.text };
  });
}
