// A chat or explain turn on an endpoint: the conversation (kept by the chat service) goes to
// /v1/chat/completions as messages, the reply streams back as the same `leapfrog/chatDelta`
// notifications as a local turn, through the same stop-string filter. The server applies the
// model's chat template; what does not fit its context is dropped oldest turn first.
import { CHAT_STOP_TEXTS } from '../chat/chat-template';
import { StopStrings } from '../generation/stop-strings';
import type { ChatDeltaParams, ChatFinishReason, ChatMessage, ChatResult } from '../protocol';
import type { RemoteEndpoint } from './endpoint';
import { estimateTokens } from './remote-target';

export interface RemoteTurn {
  endpoint: RemoteEndpoint;
  conversationId: string;
  system: string;
  history: ChatMessage[];
  message: string;
  maxTokens: number;
  temperature: number;
  seed: number;
  sendDelta: (d: ChatDeltaParams) => void;
  /** Called as the turn starts, with the function that cancels it. */
  onStart: (cancel: () => void) => void;
}

export interface RemoteTurnOutcome {
  result: ChatResult;
  /** The conversation after this turn (the kept history, the question, the reply). */
  history: ChatMessage[];
  /** Why the turn failed; the reply is then empty and the history unchanged. */
  error?: string;
}

export async function runRemoteTurn(t: RemoteTurn): Promise<RemoteTurnOutcome> {
  const id = t.conversationId;
  const contextSize = t.endpoint.current?.contextSize ?? 0;
  const maxTokens =
    contextSize > 0 ? Math.min(t.maxTokens, Math.floor(contextSize / 2)) : t.maxTokens;
  const userTurn: ChatMessage = { role: 'user', content: t.message };
  const history = fitHistory(t.system, t.history, userTurn, contextSize - maxTokens);
  const messages: ChatMessage[] = [{ role: 'system', content: t.system }, ...history, userTurn];

  const ac = new AbortController();
  t.onStart(() => ac.abort());
  const filter = new StopStrings(CHAT_STOP_TEXTS);
  let reply = '';
  let hitStop = false;
  const emit = (delta: string) => {
    if (!delta) return;
    reply += delta;
    t.sendDelta({ conversationId: id, delta, done: false });
  };
  let finishReason: ChatFinishReason;
  let error: string | undefined;
  let promptTokens = 0;
  let generated = 0;
  let decodeMs = 0;
  try {
    const r = await t.endpoint.chat(
      messages,
      { maxTokens, temperature: t.temperature, seed: t.seed },
      (text) => {
        const { emit: out, stopped } = filter.push(text);
        emit(out);
        if (stopped) hitStop = true;
        return !stopped;
      },
      ac.signal,
    );
    finishReason = r.finishReason;
    ({ promptTokens, generated, decodeMs } = r);
  } catch (err) {
    finishReason = 'error';
    error = err instanceof Error ? err.message : String(err);
  }
  if (!hitStop) emit(filter.flush());
  t.sendDelta({ conversationId: id, delta: '', done: true, finishReason });
  const next = reply
    ? [...history, userTurn, { role: 'assistant' as const, content: reply }]
    : history;
  return {
    result: {
      conversationId: id,
      text: reply,
      finishReason,
      stats: {
        promptTokens,
        generated,
        tokensPerSecond: decodeMs > 0 ? Math.round((generated * 1e5) / decodeMs) / 100 : 0,
        preemptions: 0,
      },
    },
    history: error ? t.history : next,
    error,
  };
}

/** The newest turns that fit `budget` tokens (estimated) beside the system prompt and question. */
function fitHistory(
  system: string,
  history: ChatMessage[],
  userTurn: ChatMessage,
  budget: number,
): ChatMessage[] {
  if (budget <= 0) return history;
  const cost = (m: ChatMessage) => estimateTokens(m.content) + 4;
  let used = estimateTokens(system) + cost(userTurn);
  let start = history.length;
  while (start > 0 && used + cost(history[start - 1]) <= budget) used += cost(history[--start]);
  // Start on a user turn, as the templates expect after the system prompt.
  while (start < history.length && history[start].role !== 'user') start++;
  return history.slice(start);
}
