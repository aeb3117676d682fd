// POST /v1/chat/completions with `stream: true`: the server applies the model's chat
// template; each chunk carries `choices[0].delta.content`, the last one a finish_reason.
import type { ChatMessage } from '../protocol';
import { errorText, parse } from './completion-api';
import { EndpointError } from './http';

export interface RemoteChatOptions {
  maxTokens: number;
  temperature: number;
  seed: number;
}

export function chatRequest(
  model: string | undefined,
  messages: ChatMessage[],
  o: RemoteChatOptions,
): { path: string; body: Record<string, unknown> } {
  return {
    path: '/v1/chat/completions',
    body: {
      ...(model !== undefined ? { model } : {}),
      messages,
      max_tokens: o.maxTokens,
      temperature: o.temperature,
      seed: o.seed,
      stream: true,
      // OpenAI's way to get token counts at the end of a stream (others ignore it).
      stream_options: { include_usage: true },
    },
  };
}

export interface ChatChunk {
  text: string;
  finishReason?: string;
  promptTokens?: number;
  completionTokens?: number;
}

export function chatChunk(data: string): ChatChunk {
  const j = parse(data);
  if (j.error !== undefined) throw new EndpointError(errorText(j.error), 'protocol');
  const choice = (Array.isArray(j.choices) ? j.choices[0] : undefined) as
    | { delta?: { content?: unknown }; message?: { content?: unknown }; finish_reason?: unknown }
    | undefined;
  // `message` where a server answered without streaming.
  const content = choice?.delta?.content ?? choice?.message?.content;
  const usage = j.usage as { prompt_tokens?: unknown; completion_tokens?: unknown } | undefined;
  return {
    text: typeof content === 'string' ? content : '',
    finishReason: typeof choice?.finish_reason === 'string' ? choice.finish_reason : undefined,
    promptTokens: typeof usage?.prompt_tokens === 'number' ? usage.prompt_tokens : undefined,
    completionTokens:
      typeof usage?.completion_tokens === 'number' ? usage.completion_tokens : undefined,
  };
}
