// The request bodies and streamed chunks of the three ways to ask a server for a completion:
//   infill — llama.cpp's POST /infill (and Leapfrog's serve): input_prefix, input_suffix and
//            input_extra (chunks of other open files); the server applies the model's FIM
//            template; chunks are `{"content": "...", "stop": false}`.
//   suffix — POST /v1/completions with `prompt` and `suffix` (Ollama, Leapfrog's serve).
//   prefix — POST /v1/completions with the prefix alone (vLLM refuses `suffix`).
// Both /v1 forms stream OpenAI chunks: `{"choices": [{"text": "...", "finish_reason": …}]}`.
import type { EndpointCompletionMode } from '../protocol';
import type { ExtraChunk } from '../completion/fim-template';
import { EndpointError } from './http';

export interface RemotePrompt {
  prefix: string;
  suffix: string;
  /** Chunks of other files (infill only). */
  extra: ExtraChunk[];
}

export interface RemoteSampling {
  maxTokens: number;
  temperature: number;
  topK: number;
  topP: number;
  seed: number;
  /** Stop strings the server applies (the stream stop rules still run on our side). */
  stop: string[];
}

export function completionRequest(
  mode: EndpointCompletionMode,
  model: string | undefined,
  prompt: RemotePrompt,
  s: RemoteSampling,
): { path: string; body: Record<string, unknown> } {
  const stop = s.stop.length ? { stop: s.stop } : {};
  if (mode === 'infill') {
    return {
      path: '/infill',
      body: {
        input_prefix: prompt.prefix,
        input_suffix: prompt.suffix,
        input_extra: prompt.extra.map((c) => ({ filename: c.path, text: c.text })),
        n_predict: s.maxTokens,
        temperature: s.temperature,
        top_k: s.topK,
        top_p: s.topP,
        seed: s.seed,
        ...stop,
        stream: true,
        // Keep the slot's KV cache: the next request shares most of this prompt.
        cache_prompt: true,
      },
    };
  }
  return {
    path: '/v1/completions',
    body: {
      ...(model !== undefined ? { model } : {}),
      prompt: prompt.prefix,
      ...(mode === 'suffix' ? { suffix: prompt.suffix } : {}),
      max_tokens: s.maxTokens,
      temperature: s.temperature,
      top_p: s.topP,
      seed: s.seed,
      ...stop,
      stream: true,
    },
  };
}

export interface CompletionChunk {
  text: string;
  /** The server says the completion is over. */
  done: boolean;
  /** Tokens generated so far, when the server counts them. */
  tokens?: number;
}

/** One streamed event's text; throws on an event that carries an error. */
export function completionChunk(mode: EndpointCompletionMode, data: string): CompletionChunk {
  const j = parse(data);
  if (j.error !== undefined) throw new EndpointError(errorText(j.error), 'protocol');
  if (mode === 'infill') {
    const tokens = num(j.tokens_predicted) ?? num((j.timings as Json | undefined)?.predicted_n);
    return { text: str(j.content), done: j.stop === true, tokens };
  }
  const choice = (Array.isArray(j.choices) ? j.choices[0] : undefined) as Json | undefined;
  const usage = j.usage as Json | undefined;
  return {
    text: str(choice?.text),
    done: choice?.finish_reason !== undefined && choice?.finish_reason !== null,
    tokens: num(usage?.completion_tokens),
  };
}

type Json = Record<string, unknown>;

export function parse(data: string): Json {
  let j: unknown;
  try {
    j = JSON.parse(data);
  } catch {
    throw new EndpointError(
      `the server sent text that is not JSON: ${data.slice(0, 80)}`,
      'protocol',
    );
  }
  if (typeof j !== 'object' || j === null) {
    throw new EndpointError(
      `the server sent ${JSON.stringify(j)} instead of an object`,
      'protocol',
    );
  }
  return j as Json;
}

export function errorText(e: unknown): string {
  if (typeof e === 'string') return e;
  if (e && typeof e === 'object' && typeof (e as Json).message === 'string')
    return (e as Json).message as string;
  return JSON.stringify(e);
}

function str(v: unknown): string {
  return typeof v === 'string' ? v : '';
}

function num(v: unknown): number | undefined {
  return typeof v === 'number' && Number.isFinite(v) ? v : undefined;
}
