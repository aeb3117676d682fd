// What a request asks of one generation — length, sampling, stop strings, streaming — read
// from the body under OpenAI's names (/v1/…) or llama.cpp's (/infill). The engine's own
// layers (defaults, the user's settings, the front end's preset) come from
// engine/generation/generation-config.ts; this is only the request's top layer.
import { randomInt } from 'node:crypto';
import type { SamplingConfig } from '../protocol';
import { ApiError, badField } from './api-error';
import {
  isObject,
  optionalBoolean,
  optionalInteger,
  optionalNumber,
  stopStrings,
  type JsonObject,
} from './request-fields';

export interface GenerationAsk {
  /** Tokens to generate at most; undefined: the endpoint's default (within the context). */
  maxTokens?: number;
  sampling: Partial<SamplingConfig>;
  stop: string[];
  stream: boolean;
  /** stream_options.include_usage: a last chunk carrying `usage`. */
  includeUsage: boolean;
  /** llama.cpp's t_max_predict_ms: end once this long after the first token, at a newline. */
  maxPredictMs?: number;
}

/** The fields /v1/completions and /v1/chat/completions share. */
export function openAiAsk(body: JsonObject, kind: 'completion' | 'chat'): GenerationAsk {
  const n = optionalInteger(body, 'n', { min: 1 });
  if (n !== undefined && n !== 1) throw unsupported('n', "only 'n': 1 is supported");
  const bestOf = optionalInteger(body, 'best_of', { min: 1 });
  if (bestOf !== undefined && bestOf !== 1)
    throw unsupported('best_of', "'best_of' is not supported");
  const logprobs = body.logprobs;
  if (logprobs !== undefined && logprobs !== null && logprobs !== false && logprobs !== 0) {
    throw unsupported('logprobs', "'logprobs' is not supported");
  }
  if (body.echo === true) throw unsupported('echo', "'echo' is not supported");
  // Read so that a wrong type is reported; the engine has a repeat penalty instead.
  optionalNumber(body, 'presence_penalty', { min: -2, max: 2 });
  optionalNumber(body, 'frequency_penalty', { min: -2, max: 2 });
  const maxTokens =
    (kind === 'chat' ? optionalInteger(body, 'max_completion_tokens', { min: 1 }) : undefined) ??
    optionalInteger(body, 'max_tokens', { min: 1 });
  const stream = optionalBoolean(body, 'stream') ?? false;
  let includeUsage = false;
  const options = body.stream_options;
  if (options !== undefined && options !== null) {
    if (!isObject(options)) throw badField('stream_options', "'stream_options' must be an object");
    includeUsage = optionalBoolean(options, 'include_usage') ?? false;
  }
  return {
    maxTokens,
    sampling: samplingFrom(body, { seedMayBeRandom: false }),
    stop: stopStrings(body),
    stream,
    includeUsage,
  };
}

/** llama.cpp's names, as /infill (and its /completion) take them. */
export function llamaCppAsk(body: JsonObject): GenerationAsk {
  const nPredict = optionalInteger(body, 'n_predict', { min: -1 });
  if (nPredict === 0) throw badField('n_predict', "'n_predict' must be -1 (no limit) or ≥ 1");
  return {
    maxTokens: nPredict === undefined || nPredict < 0 ? undefined : nPredict,
    sampling: samplingFrom(body, { seedMayBeRandom: true }),
    stop: stopStrings(body),
    stream: optionalBoolean(body, 'stream') ?? false,
    includeUsage: false,
    maxPredictMs: positive(optionalInteger(body, 't_max_predict_ms', { min: 0 })),
  };
}

function samplingFrom(body: JsonObject, o: { seedMayBeRandom: boolean }): Partial<SamplingConfig> {
  const sampling: Partial<SamplingConfig> = {};
  const set = <K extends keyof SamplingConfig>(key: K, v: SamplingConfig[K] | undefined) => {
    if (v !== undefined) sampling[key] = v;
  };
  set('temperature', optionalNumber(body, 'temperature', { min: 0, max: 2 }));
  set('topP', optionalNumber(body, 'top_p', { min: 0, max: 1 }));
  // llama.cpp's and vLLM's extensions, which their clients send to OpenAI-style servers too.
  set('topK', optionalInteger(body, 'top_k', { min: 0 }));
  set('minP', optionalNumber(body, 'min_p', { min: 0, max: 1 }));
  set('repeatPenalty', optionalNumber(body, 'repeat_penalty', { min: 0, minExclusive: true }));
  const seed = optionalInteger(body, 'seed', { min: Number.MIN_SAFE_INTEGER });
  // llama.cpp: seed -1 means "pick one"; elsewhere any integer is a seed.
  if (seed !== undefined && !(o.seedMayBeRandom && seed === -1)) sampling.seed = seedValue(seed);
  return sampling;
}

/** The engine takes a non-negative seed: any integer maps to one in [0, 2^32). */
function seedValue(seed: number): number {
  const m = 2 ** 32;
  return ((seed % m) + m) % m;
}

/** A seed for a request that gave none: sampled text varies between requests, as OpenAI's. */
export function randomSeed(): number {
  return randomInt(0, 2 ** 32 - 1);
}

function positive(v: number | undefined): number | undefined {
  return v !== undefined && v > 0 ? v : undefined;
}

function unsupported(param: string, message: string): ApiError {
  return new ApiError(400, message, param, 'unsupported_parameter');
}
