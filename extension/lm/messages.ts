// VS Code's chat messages as the sidecar's ChatMessage list: roles by their enum values,
// content as its text. Leapfrog's models take text only (no tools, no images), so parts
// without text are left out; a tool result's own text parts are kept.
import type { ChatMessage } from '../../engine/protocol';
import { ROLE_ASSISTANT, ROLE_SYSTEM, type LanguageModelChatRequestMessage } from './api';

export function toChatMessages(
  messages: readonly LanguageModelChatRequestMessage[],
): ChatMessage[] {
  return messages.map((m) => ({ role: roleOf(m.role), content: textOf(m.content) }));
}

function roleOf(role: number): ChatMessage['role'] {
  if (role === ROLE_ASSISTANT) return 'assistant';
  if (role === ROLE_SYSTEM) return 'system';
  return 'user';
}

/** The text of a message's parts: LanguageModelTextPart values, in order. */
export function textOf(content: ReadonlyArray<unknown>): string {
  let text = '';
  for (const part of content) {
    if (typeof part === 'string') text += part;
    else if (isText(part)) text += part.value;
    else if (isToolResult(part)) text += textOf(part.content);
  }
  return text;
}

function isText(part: unknown): part is { value: string } {
  return typeof (part as { value?: unknown } | null)?.value === 'string';
}

function isToolResult(part: unknown): part is { callId: string; content: unknown[] } {
  const p = part as { callId?: unknown; content?: unknown } | null;
  return typeof p?.callId === 'string' && Array.isArray(p.content);
}
