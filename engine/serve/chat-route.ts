// POST /v1/chat/completions: the messages rendered by the GGUF's chat template (as the chat
// service renders a turn), sampled with the chat preset unless the request says otherwise,
// ending at an end-of-generation token, a chat stop text or a request's stop string.
import type { ServerResponse } from 'node:http';
import { CHAT_STOP_TEXTS } from '../chat/chat-template';
import { CHAT_OVERRIDES } from '../generation/generation-config';
import { GENERATION_DEFAULTS, type ChatMessage } from '../protocol';
import { ApiError, badField } from './api-error';
import { openAiAsk } from './generation-ask';
import { chatPrompt } from './prompts';
import { isObject, type JsonObject } from './request-fields';
import { chatBody, chatChunk, responseHead, usageChunk, usageOf } from './responses';
import { paramsFor, runGeneration, tokenBudget, type RunNote } from './run-request';
import type { ServeEngine } from './serve-engine';
import { log } from '../server/log';

export async function chatRoute(
  serve: ServeEngine,
  body: JsonObject,
  res: ServerResponse,
): Promise<RunNote> {
  const ready = serve.whenServing();
  const ask = openAiAsk(body, 'chat');
  if (Array.isArray(body.tools) && body.tools.length > 0) {
    throw new ApiError(400, "'tools' are not supported", 'tools', 'unsupported_parameter');
  }
  const format = body.response_format;
  if (isObject(format) && format.type !== 'text') {
    throw new ApiError(
      400,
      'only \'response_format\' {"type": "text"} is supported',
      'response_format',
      'unsupported_parameter',
    );
  }
  const messages = chatMessages(body.messages);
  const { prompt, warning } = chatPrompt(ready.engine, messages);
  if (warning) log('warn', warning);
  const fallback = CHAT_OVERRIDES.maxTokens ?? GENERATION_DEFAULTS.maxTokens;
  const maxTokens = tokenBudget(ready, prompt.length, ask.maxTokens, fallback);
  const head = responseHead('chatcmpl', ready.modelId);
  return runGeneration(ready, res, {
    prompt,
    params: paramsFor(serve, CHAT_OVERRIDES, ask, maxTokens),
    stop: [...CHAT_STOP_TEXTS, ...ask.stop],
    stream: ask.stream,
    shape: {
      body: (r) => chatBody(head, prompt.length, r),
      opening: () => [chatChunk(head, { role: 'assistant', content: '' }, null)],
      delta: (text) => chatChunk(head, { content: text }, null),
      closing: (r) => [
        chatChunk(head, {}, r.finishReason),
        ...(ask.includeUsage
          ? [usageChunk(head, 'chat.completion.chunk', usageOf(prompt.length, r))]
          : []),
      ],
      doneMarker: true,
    },
  });
}

/** OpenAI's messages: roles system, developer (a system message), user and assistant. */
export function chatMessages(value: unknown): ChatMessage[] {
  if (!Array.isArray(value) || value.length === 0) {
    throw badField('messages', "'messages' must be a non-empty array");
  }
  return value.map((m: unknown, i): ChatMessage => {
    const at = `messages[${i}]`;
    if (!isObject(m)) throw badField(at, `${at} must be an object`);
    const role = m.role === 'developer' ? 'system' : m.role;
    if (role !== 'system' && role !== 'user' && role !== 'assistant') {
      throw badField(
        `${at}.role`,
        `${at}.role must be system, developer, user or assistant (tools are not supported)`,
      );
    }
    return { role, content: messageText(m.content, `${at}.content`) };
  });
}

/** A message's content: a string, or text parts (`[{type: "text", text}]`). */
function messageText(content: unknown, at: string): string {
  if (content === null || content === undefined) return '';
  if (typeof content === 'string') return content;
  if (Array.isArray(content)) {
    return content
      .map((part: unknown, i) => {
        if (isObject(part) && part.type === 'text' && typeof part.text === 'string') {
          return part.text;
        }
        throw badField(`${at}[${i}]`, `${at}[${i}] must be a text part ({"type": "text", "text"})`);
      })
      .join('');
  }
  throw badField(at, `${at} must be a string or an array of text parts`);
}
