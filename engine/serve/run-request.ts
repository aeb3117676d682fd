// The part every generating route shares: the request's generation layer on top of the
// engine's (engine/generation/generation-config.ts, the one place parameters are built), the
// token budget within the context, then one pool job whose text goes out whole or as
// server-sent events. A client that goes away cancels its job, queued or running.
import type { ServerResponse } from 'node:http';
import type { GenerateParams } from '../native/addon';
import { GENERATION_DEFAULTS } from '../protocol';
import {
  buildGenerateParams,
  mergeOverrides,
  type GenerationOverrides,
} from '../generation/generation-config';
import { ApiError, contextExceeded } from './api-error';
import { EventStream, sendError, sendJson } from './http-io';
import { randomSeed, type GenerationAsk } from './generation-ask';
import type { Ready, ServeEngine } from './serve-engine';
import { generateText, type TextResult } from './text-generation';

/** How a route shapes its output. */
export interface Shape {
  /** The whole response (stream: false). */
  body(result: TextResult): unknown;
  /** Events sent before any text (e.g. the chat's role delta). */
  opening?(): unknown[];
  delta(text: string): unknown;
  /** Events after the last text. */
  closing(result: TextResult): unknown[];
  /** OpenAI ends a stream with `data: [DONE]`; llama.cpp's /infill does not. */
  doneMarker: boolean;
}

export interface RunSpec {
  prompt: number[];
  params: GenerateParams;
  stop: readonly string[];
  stream: boolean;
  maxPredictMs?: number;
  shape: Shape;
}

/** A line for the request log: what happened to the generation. */
export type RunNote = string;

/**
 * The request's parameters over the front end's preset: sampling without a seed gets a
 * random one (sampled text varies between requests, as OpenAI's does).
 */
export function paramsFor(
  serve: ServeEngine,
  preset: GenerationOverrides,
  ask: GenerationAsk,
  maxTokens: number,
): GenerateParams {
  const request: GenerationOverrides = { maxTokens, sampling: { ...ask.sampling } };
  const params = buildGenerateParams(
    GENERATION_DEFAULTS,
    serve.settings,
    mergeOverrides(preset, request),
  );
  if (ask.sampling.seed === undefined && params.sampling.temperature > 0) {
    params.sampling.seed = randomSeed();
  }
  return params;
}

/**
 * Tokens to generate for a prompt of `promptLength`: what was asked (a 400 when it does not
 * fit, as OpenAI answers), else the endpoint's default within what is left of the context.
 */
export function tokenBudget(
  ready: Ready,
  promptLength: number,
  asked: number | undefined,
  fallback: number,
): number {
  const nCtx = ready.engine.nCtx;
  if (promptLength === 0) throw new ApiError(400, 'the prompt is empty', 'prompt');
  if (promptLength >= nCtx) {
    throw contextExceeded(
      `the prompt is ${promptLength} tokens, more than the model's context of ${nCtx} tokens allows`,
    );
  }
  if (asked !== undefined && promptLength + asked > nCtx) {
    throw contextExceeded(
      `the prompt (${promptLength} tokens) plus max_tokens ${asked} exceeds the model's ` +
        `context of ${nCtx} tokens`,
      'max_tokens',
    );
  }
  return Math.min(asked ?? fallback, nCtx - promptLength);
}

export async function runGeneration(
  ready: Ready,
  res: ServerResponse,
  spec: RunSpec,
): Promise<RunNote> {
  const stream = spec.stream ? new EventStream(res) : undefined;
  for (const e of (stream && spec.shape.opening?.()) || []) stream?.send(e);
  const call = generateText(ready.pool, {
    prompt: spec.prompt,
    params: spec.params,
    stop: spec.stop,
    nCtx: ready.engine.nCtx,
    maxPredictMs: spec.maxPredictMs,
    onText: stream ? (t) => stream.send(spec.shape.delta(t)) : undefined,
  });
  // 'close' also follows a finished response; only an unfinished one means the client left.
  const onClose = () => {
    if (!res.writableFinished) call.cancel();
  };
  res.on('close', onClose);
  const outcome = await call.outcome;
  res.off('close', onClose);
  if (outcome.status === 'cancelled') {
    // The client left — or the server is shutting down, and says so to those still there.
    const err = new ApiError(503, 'the server is shutting down', null, 'shutting_down');
    if (stream) {
      stream.send(err.body());
      stream.end();
    } else sendError(res, err);
    return outcome.queued
      ? 'cancelled while queued'
      : `cancelled after ${outcome.generated} tokens`;
  }
  if (outcome.status === 'failed') {
    const err = new ApiError(500, `generation failed: ${outcome.error.message}`);
    if (stream) {
      stream.send(err.body());
      stream.end();
    } else sendError(res, err);
    return `failed: ${outcome.error.message}`;
  }
  const { result } = outcome;
  if (stream) {
    for (const e of spec.shape.closing(result)) stream.send(e);
    if (spec.shape.doneMarker) stream.done();
    else stream.end();
  } else {
    sendJson(res, 200, spec.shape.body(result));
  }
  const s = result.stats;
  return (
    `prompt ${spec.prompt.length} (cached ${s.reusedTokens}), generated ${result.tokens.length}, ` +
    `${result.finishReason}, drafted ${s.drafted} accepted ${s.accepted} passes ${s.targetPasses}`
  );
}
