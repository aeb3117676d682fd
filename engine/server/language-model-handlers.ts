// The requests behind VS Code's Language Model API (extension/lm/): one reply to a whole
// message list (`leapfrog/chatMessages`, stateless: the chat service's own turn, on a
// conversation that lives for that request only), the loaded model as a chat model
// (`leapfrog/chatModel`) and token counts with its tokenizer (`leapfrog/countTokens`).
import {
  ErrorCodes,
  ResponseError,
  type CancellationToken,
  type Connection,
} from 'vscode-languageserver/node';
import {
  ChatMessagesRequest,
  ChatModelRequest,
  CountTokensRequest,
  GENERATION_DEFAULTS,
  LeapfrogErrorCodes,
  type ChatMessage,
  type ChatModelInfo,
} from '../protocol';
import { CHAT_OVERRIDES } from '../generation/generation-config';
import { modelName, type LoadedEngine } from '../models/model-host';
import type { EngineCore } from './engine-core';
import { requireFields, toResponseError } from './errors';
import { onCancel } from './on-cancel';

const ROLES = new Set<ChatMessage['role']>(['system', 'user', 'assistant']);

export function registerLanguageModelHandlers(conn: Connection, core: EngineCore): void {
  /** Request ids running now: a second request with one must not reset the first. */
  const running = new Set<string>();

  conn.onRequest(ChatMessagesRequest, async (params, token: CancellationToken) => {
    requireFields(params, { requestId: 'string' });
    if (running.has(params.requestId)) {
      throw new ResponseError(ErrorCodes.InvalidRequest, `${params.requestId} is already running`);
    }
    const { system, history, message } = splitChatMessages(params.messages);
    for (const field of ['maxTokens', 'temperature'] as const) {
      const v = params[field];
      if (v !== undefined && (typeof v !== 'number' || !Number.isFinite(v) || v < 0)) {
        throw new ResponseError(ErrorCodes.InvalidParams, `params.${field} must be a number ≥ 0`);
      }
    }
    running.add(params.requestId);
    try {
      return await core.chat.turn(
        {
          conversationId: params.requestId,
          message,
          system,
          history,
          maxTokens: params.maxTokens,
          temperature: params.temperature,
        },
        (cancel) => onCancel(token, cancel),
      );
    } catch (err) {
      throw toResponseError(err, 'chat');
    } finally {
      // Stateless: nothing of this request stays on the server.
      core.chat.reset(params.requestId);
      running.delete(params.requestId);
    }
  });

  conn.onRequest(ChatModelRequest, () => {
    const engine = core.host.current;
    return { model: engine ? chatModelInfo(engine) : null };
  });

  conn.onRequest(CountTokensRequest, (params) => {
    requireFields(params, { text: 'string' });
    const engine = core.host.current;
    if (!engine) throw new ResponseError(LeapfrogErrorCodes.NoModel, 'no model is loaded');
    return { tokens: engine.target.tokenize(params.text, false, false).length };
  });
}

/** The chat limits of a loaded model: the chat service's own (engine/chat/chat-service.ts). */
export function chatModelInfo(engine: LoadedEngine): ChatModelInfo {
  // A turn gets at most half the context for its reply; by default CHAT_OVERRIDES' tokens.
  const maxOutputTokens = Math.max(1, Math.floor(engine.nCtx / 2));
  const asked = CHAT_OVERRIDES.maxTokens ?? GENERATION_DEFAULTS.maxTokens;
  return {
    name: modelName(engine.info) ?? engine.paths.model,
    path: engine.paths.model,
    architecture: engine.info.architecture,
    contextSize: engine.nCtx,
    defaultMaxTokens: Math.min(asked, maxOutputTokens),
    maxOutputTokens,
    hasChatTemplate: engine.info.chatTemplate.trim() !== '',
  };
}

/**
 * A whole message list as the chat service takes it: the system messages joined into one
 * system prompt, consecutive messages of one role joined (chat templates expect turns to
 * alternate), the last message (the user's) as the new turn and the rest as history.
 */
export function splitChatMessages(messages: unknown): {
  system?: string;
  history: ChatMessage[];
  message: string;
} {
  if (!Array.isArray(messages) || messages.length === 0) {
    throw new ResponseError(ErrorCodes.InvalidParams, 'params.messages must be a non-empty array');
  }
  const systems: string[] = [];
  const turns: ChatMessage[] = [];
  messages.forEach((m: unknown, i) => {
    const { role, content } = (m ?? {}) as Partial<ChatMessage>;
    if (!role || !ROLES.has(role) || typeof content !== 'string') {
      throw new ResponseError(
        ErrorCodes.InvalidParams,
        `params.messages[${i}] must be {role: "system"|"user"|"assistant", content: string}`,
      );
    }
    if (role === 'system') {
      if (content.trim()) systems.push(content);
      return;
    }
    const last = turns.at(-1);
    if (last?.role === role) last.content += `\n\n${content}`;
    else turns.push({ role, content });
  });
  const last = turns.pop();
  if (!last || last.role !== 'user') {
    throw new ResponseError(ErrorCodes.InvalidParams, 'the last message must be the user’s');
  }
  return {
    system: systems.length > 0 ? systems.join('\n\n') : undefined,
    history: turns,
    message: last.content,
  };
}
