// Conversations: each keeps its history on the server; a turn renders the chat template,
// runs as a restartable scheduler job on the chat session (completions may preempt it; it
// then continues from its prompt plus the tokens it already produced), and streams its
// text as deltas. Several conversations may run; the scheduler takes their turns in order.
import type { GenerateStats, GenerationHandle } from '../native/addon';
import type { ModelHost } from '../models/model-host';
import { emptyStats, type Scheduler, type Ticket } from '../scheduler/scheduler';
import type { ChatDeltaParams, ChatFinishReason, ChatMessage, ChatResult } from '../protocol';
import { CHAT_STOP_TEXTS } from './chat-template';
import { chatPromptIds } from './chat-prompt';
import { DEFAULT_SYSTEM_PROMPT } from './explain';
import { StopStrings } from '../generation/stop-strings';
import { GENERATION_DEFAULTS } from '../protocol';
import {
  CHAT_OVERRIDES,
  buildGenerateParams,
  defaultGenerationSettings,
  mergeOverrides,
  type GenerationSettings,
} from '../generation/generation-config';
import type { RemoteEndpoint } from '../remote/endpoint';
import { runRemoteTurn } from '../remote/remote-chat';

export interface TurnParams {
  conversationId: string;
  message: string;
  system?: string;
  /**
   * Replaces the conversation's earlier turns when given: a stateless caller (VS Code's
   * Language Model API, `leapfrog/chatMessages`) sends the whole list with each request.
   */
  history?: ChatMessage[];
  maxTokens?: number;
  temperature?: number;
}

interface Conversation {
  system: string;
  history: ChatMessage[];
  running?: Pick<Ticket, 'cancel'>;
}

/** A failure the server maps to a protocol error code. */
export class ChatError extends Error {
  constructor(
    message: string,
    readonly kind: 'busy' | 'too-long' | 'unknown' | 'failed',
  ) {
    super(message);
  }
}

export class ChatService {
  private readonly conversations = new Map<string, Conversation>();
  counters = { chatTurns: 0 };

  constructor(
    private readonly host: ModelHost,
    private readonly scheduler: Scheduler,
    private readonly sendDelta: (d: ChatDeltaParams) => void,
    private readonly onFinished: (stats: GenerateStats) => void = () => {},
    private readonly log: (msg: string) => void = () => {},
    /** The user's settings, read at each turn (a change applies to the next one). */
    private readonly settings: () => GenerationSettings = defaultGenerationSettings,
    /** The endpoint turns go to instead of the local model, while one is set. */
    private readonly remote: () => RemoteEndpoint | undefined = () => undefined,
  ) {}

  get activeTurns(): number {
    let n = 0;
    for (const c of this.conversations.values()) if (c.running) n++;
    return n;
  }

  cancel(conversationId: string): boolean {
    const c = this.conversations.get(conversationId);
    if (!c?.running) return false;
    c.running.cancel();
    return true;
  }

  reset(conversationId: string): void {
    this.cancel(conversationId);
    this.conversations.delete(conversationId);
  }

  cancelAll(): void {
    for (const c of this.conversations.values()) c.running?.cancel();
  }

  /** A turn on the endpoint (engine/remote/remote-chat.ts): the same deltas and history. */
  private async remoteTurn(
    endpoint: RemoteEndpoint,
    conv: Conversation,
    p: TurnParams,
    onCancel?: (cancel: () => void) => void,
  ): Promise<ChatResult> {
    this.counters.chatTurns++;
    try {
      const out = await runRemoteTurn({
        endpoint,
        conversationId: p.conversationId,
        system: conv.system,
        history: conv.history,
        message: p.message,
        maxTokens: p.maxTokens ?? CHAT_OVERRIDES.maxTokens ?? GENERATION_DEFAULTS.maxTokens,
        temperature: p.temperature ?? CHAT_OVERRIDES.sampling?.temperature ?? 0,
        seed: CHAT_OVERRIDES.sampling?.seed ?? 0,
        sendDelta: this.sendDelta,
        onStart: (cancel) => {
          conv.running = { cancel };
          onCancel?.(cancel);
        },
      });
      if (out.error) throw new ChatError(out.error, 'failed');
      conv.history = out.history;
      return out.result;
    } finally {
      conv.running = undefined;
    }
  }

  /** Runs one turn; `onCancel` registers the request's cancellation ($/cancelRequest). */
  async turn(p: TurnParams, onCancel?: (cancel: () => void) => void): Promise<ChatResult> {
    const id = p.conversationId;
    let conv = this.conversations.get(id);
    if (!conv) this.conversations.set(id, (conv = { system: DEFAULT_SYSTEM_PROMPT, history: [] }));
    if (conv.running) throw new ChatError(`conversation ${id} already has a turn running`, 'busy');
    if (p.system !== undefined) conv.system = p.system;
    if (p.history !== undefined) conv.history = [...p.history];
    const endpoint = this.remote();
    if (endpoint) return this.remoteTurn(endpoint, conv, p, onCancel);

    const engine = await this.host.whenReady();
    const asked = p.maxTokens ?? CHAT_OVERRIDES.maxTokens ?? GENERATION_DEFAULTS.maxTokens;
    const maxTokens = Math.max(1, Math.min(asked, Math.floor(engine.nCtx / 2)));
    const userTurn: ChatMessage = { role: 'user', content: p.message };
    // Oldest turns go first when the conversation no longer fits the context.
    let history = conv.history;
    let prompt: number[];
    for (;;) {
      const messages: ChatMessage[] = [
        { role: 'system', content: conv.system },
        ...history,
        userTurn,
      ];
      const rendered = chatPromptIds(engine.target, engine.info, messages);
      if (rendered.warning) this.log(rendered.warning);
      prompt = rendered.prompt;
      if (prompt.length + maxTokens <= engine.nCtx) break;
      if (history.length === 0) {
        throw new ChatError(
          `the message is too long for the model's context (${prompt.length} prompt tokens + ` +
            `${maxTokens} to generate > ${engine.nCtx})`,
          'too-long',
        );
      }
      history = history.slice(2);
    }

    const eog = new Set(engine.info.eogIds);
    const overrides = mergeOverrides(CHAT_OVERRIDES, {
      sampling: p.temperature === undefined ? {} : { temperature: p.temperature },
    });
    const params = buildGenerateParams(GENERATION_DEFAULTS, this.settings(), overrides);
    const generated: number[] = [];
    const filter = new StopStrings(CHAT_STOP_TEXTS);
    let reply = '';
    let hitStop = false;
    let firstStats: GenerateStats | undefined;
    let starts = 0;
    const emit = (delta: string) => {
      if (!delta) return;
      reply += delta;
      this.sendDelta({ conversationId: id, delta, done: false });
    };
    const promptIds = prompt;

    const ticket = this.scheduler.submit({
      kind: 'chat',
      key: id,
      start: (): GenerationHandle => {
        starts++;
        const left = maxTokens - generated.length;
        if (hitStop || left <= 0) return finishedHandle();
        let handle: GenerationHandle | undefined;
        let stopped = false;
        const stop = () => {
          stopped = true;
          hitStop = true;
          handle?.abort();
        };
        handle = engine.chatSession.generate(
          promptIds.concat(generated),
          { ...params, maxTokens: left },
          (tokenId, text) => {
            if (stopped) return;
            if (eog.has(tokenId)) return stop();
            if (tokenId >= 0) generated.push(tokenId); // -1: the detokenizer's flushed tail
            const { emit: out, stopped: sawStop } = filter.push(text);
            emit(out);
            if (sawStop) stop();
          },
        );
        if (stopped) handle.abort();
        return handle;
      },
    });
    conv.running = ticket;
    this.counters.chatTurns++;
    onCancel?.(() => ticket.cancel());

    const outcome = await ticket.outcome;
    conv.running = undefined;
    if (!hitStop) emit(filter.flush());
    let finishReason: ChatFinishReason;
    if (outcome.status === 'failed') finishReason = 'error';
    else if (outcome.status === 'finished') {
      firstStats = outcome.stats;
      this.onFinished(outcome.stats);
      finishReason = hitStop || generated.length < maxTokens ? 'stop' : 'length';
    } else finishReason = 'cancelled';
    this.sendDelta({ conversationId: id, delta: '', done: true, finishReason });
    if (outcome.status === 'failed') throw new ChatError(outcome.error.message, 'failed');

    conv.history = [...history, userTurn];
    if (reply) conv.history.push({ role: 'assistant', content: reply });
    else conv.history.pop(); // nothing was said: forget the question too
    const decodeMs = firstStats?.decodeMs ?? 0;
    return {
      conversationId: id,
      text: reply,
      finishReason,
      stats: {
        promptTokens: promptIds.length,
        generated: generated.length,
        tokensPerSecond:
          decodeMs > 0 ? Math.round(((firstStats?.generated ?? 0) * 1e5) / decodeMs) / 100 : 0,
        preemptions: Math.max(0, starts - 1),
      },
    };
  }
}

/** A generation that is already over (a preempted turn that had nothing left to do). */
function finishedHandle(): GenerationHandle {
  return { done: Promise.resolve(emptyStats(false)), abort: () => {} };
}
