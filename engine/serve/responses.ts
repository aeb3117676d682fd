// The response bodies: OpenAI's completion and chat shapes (whole, and as stream chunks) and
// llama.cpp's /infill shape. `usage` carries the speculation figures next to OpenAI's counts.
import { randomBytes } from 'node:crypto';
import type { GenerateStats } from '../native/addon';
import type { FinishReason, TextResult } from './text-generation';

export interface Usage {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
  /** Prompt tokens whose KV cache was reused from the session's previous request. */
  prompt_tokens_details: { cached_tokens: number };
  /** Tokens drafted and accepted, and target model passes (without speculation: one a token). */
  speculation: { drafted: number; accepted: number; target_passes: number };
}

export function usageOf(promptTokens: number, result: TextResult): Usage {
  const s = result.stats;
  return {
    prompt_tokens: promptTokens,
    completion_tokens: result.tokens.length,
    total_tokens: promptTokens + result.tokens.length,
    prompt_tokens_details: { cached_tokens: s.reusedTokens },
    speculation: { drafted: s.drafted, accepted: s.accepted, target_passes: s.targetPasses },
  };
}

/** What stays the same across one response's chunks. */
export interface ResponseHead {
  id: string;
  created: number;
  model: string;
}

export function responseHead(prefix: 'cmpl' | 'chatcmpl', model: string): ResponseHead {
  return {
    id: `${prefix}-${randomBytes(12).toString('hex')}`,
    created: Math.floor(Date.now() / 1000),
    model,
  };
}

export function completionBody(
  head: ResponseHead,
  promptTokens: number,
  result: TextResult,
  /** Leapfrog's (and llama.cpp's) `return_tokens`: the generated ids in the choice. */
  withTokens = false,
): object {
  const choice = {
    index: 0,
    text: result.text,
    logprobs: null,
    finish_reason: result.finishReason,
  };
  return {
    ...head,
    object: 'text_completion',
    choices: [withTokens ? { ...choice, tokens: result.tokens } : choice],
    usage: usageOf(promptTokens, result),
  };
}

export function completionChunk(
  head: ResponseHead,
  text: string,
  finishReason: FinishReason | null,
): object {
  return {
    ...head,
    object: 'text_completion',
    choices: [{ index: 0, text, logprobs: null, finish_reason: finishReason }],
  };
}

export function chatBody(head: ResponseHead, promptTokens: number, result: TextResult): object {
  return {
    ...head,
    object: 'chat.completion',
    choices: [
      {
        index: 0,
        message: { role: 'assistant', content: result.text },
        logprobs: null,
        finish_reason: result.finishReason,
      },
    ],
    usage: usageOf(promptTokens, result),
  };
}

export function chatChunk(
  head: ResponseHead,
  delta: { role?: 'assistant'; content?: string },
  finishReason: FinishReason | null,
): object {
  return {
    ...head,
    object: 'chat.completion.chunk',
    choices: [{ index: 0, delta, logprobs: null, finish_reason: finishReason }],
  };
}

/** The last chunk when stream_options.include_usage is set: no choices, the usage. */
export function usageChunk(
  head: ResponseHead,
  object: 'text_completion' | 'chat.completion.chunk',
  usage: Usage,
): object {
  return { ...head, object, choices: [], usage };
}

/** llama.cpp's /infill (and /completion) result, the fields its clients read. */
export function infillBody(
  model: string,
  promptTokens: number,
  truncated: boolean,
  result: TextResult,
): object {
  return {
    content: result.text,
    stop: true,
    model,
    tokens_predicted: result.tokens.length,
    tokens_evaluated: promptTokens,
    tokens_cached: result.stats.reusedTokens,
    truncated,
    stop_type: result.stoppedBy,
    stopped_eos: result.stoppedBy === 'eos',
    stopped_word: result.stoppedBy === 'word',
    stopped_limit: result.stoppedBy === 'limit',
    stopping_word: result.stoppingWord,
    timings: infillTimings(promptTokens, result.tokens.length, result.stats),
  };
}

function infillTimings(promptTokens: number, generated: number, s: GenerateStats): object {
  const perSecond = (n: number, ms: number) => (ms > 0 ? (n * 1000) / ms : 0);
  const evaluated = promptTokens - s.reusedTokens;
  return {
    cache_n: s.reusedTokens,
    prompt_n: evaluated,
    prompt_ms: s.promptMs,
    prompt_per_second: perSecond(evaluated, s.promptMs),
    predicted_n: generated,
    predicted_ms: s.decodeMs,
    predicted_per_second: perSecond(generated, s.decodeMs),
    draft_n: s.drafted,
    draft_n_accepted: s.accepted,
  };
}
