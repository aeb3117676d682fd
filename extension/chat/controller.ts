// One conversation with the engine: sends chat and explain turns, collects the streamed
// `leapfrog/chatDelta` text, stops a turn on request, and keeps the transcript in history.
// It does not know about the webview: the view subscribes to `onDidChange`.
import * as vscode from 'vscode';
import { ErrorCodes, ResponseError } from 'vscode-languageclient/node';
import {
  ChatCancelRequest,
  ChatRequest,
  ChatResetRequest,
  ExplainRequest,
  type ChatDeltaParams,
  type ChatResult,
} from '../../engine/protocol';
import type { Sidecar } from '../sidecar';
import { ChatHistory, fresh, type Conversation, type Turn } from './history';

export interface ExplainInput {
  selection: string;
  fileName: string;
  languageId: string;
}

/** What changed, so the view can send one turn instead of the whole transcript. */
export type ChatChange = { kind: 'all' } | { kind: 'turn'; index: number };

/** The note on a reply whose engine died under it (the sidecar restarts by itself). */
export const INTERRUPTED_NOTE = 'interrupted: the engine stopped; send again to retry';

/** The request failed because the sidecar went away, not because it answered an error. */
function isConnectionLoss(e: unknown): boolean {
  if (e instanceof ResponseError)
    return (
      e.code === ErrorCodes.PendingResponseRejected || e.code === ErrorCodes.ConnectionInactive
    );
  return /connection (got disposed|is (closed|disposed))/i.test((e as Error)?.message ?? '');
}

const SYSTEM =
  'You are Leapfrog, a concise coding assistant running locally in the editor. ' +
  'Answer in Markdown; put code in fenced blocks with a language.';

export class ChatController implements vscode.Disposable {
  private conv: Conversation;
  private running: { cts: vscode.CancellationTokenSource; index: number } | undefined;
  /** Conversations the current sidecar has seen; a new sidecar starts with none. */
  private readonly serverKnows = new Set<string>();
  private readonly changed = new vscode.EventEmitter<ChatChange>();
  private readonly subs: vscode.Disposable[] = [];
  readonly onDidChange = this.changed.event;

  constructor(
    private readonly sidecar: Sidecar,
    private readonly history: ChatHistory,
  ) {
    this.conv = history.load();
    this.subs.push(
      sidecar.onChatDelta((p) => this.onDelta(p)),
      sidecar.onDidStartClient(() => {
        this.serverKnows.clear();
        // A turn still open belonged to the sidecar that is gone: its reply will never end.
        this.interrupt();
      }),
    );
  }

  get turns(): readonly Turn[] {
    return this.conv.turns;
  }

  get busy(): boolean {
    return this.running !== undefined;
  }

  async send(message: string): Promise<void> {
    const text = message.trim();
    if (!text || this.running) return;
    await this.turn(text, (client, cts, system) =>
      client.sendRequest(
        ChatRequest,
        { conversationId: this.conv.id, message: text, system },
        cts.token,
      ),
    );
  }

  async explain(input: ExplainInput): Promise<void> {
    if (this.running) this.stop();
    const name = input.fileName.split(/[\\/]/).pop() ?? input.fileName;
    const shown = `Explain this code from \`${name}\`:\n\n\`\`\`${input.languageId}\n${input.selection}\n\`\`\``;
    await this.turn(shown, (client, cts) =>
      client.sendRequest(ExplainRequest, { conversationId: this.conv.id, ...input }, cts.token),
    );
  }

  private async turn(
    userText: string,
    request: (
      client: NonNullable<Sidecar['client']>,
      cts: vscode.CancellationTokenSource,
      system: string | undefined,
    ) => Promise<ChatResult>,
  ): Promise<void> {
    this.conv.turns.push({ role: 'user', text: userText });
    this.conv.turns.push({ role: 'assistant', text: '' });
    const index = this.conv.turns.length - 1;
    const cts = new vscode.CancellationTokenSource();
    this.running = { cts, index };
    this.changed.fire({ kind: 'all' });
    const client = this.sidecar.client;
    const reply = this.conv.turns[index];
    try {
      if (!client) throw new Error(this.sidecar.view.message ?? 'the engine is not running');
      const result = await request(client, cts, this.systemFor(index - 1));
      this.serverKnows.add(this.conv.id);
      if (this.running?.index === index) {
        // The result carries the whole reply; trust it over the deltas we may have missed.
        if (result.text.length >= reply.text.length) reply.text = result.text;
        if (result.finishReason === 'length') reply.note = 'cut at the token limit';
        if (result.finishReason === 'cancelled') reply.note = 'stopped';
      }
    } catch (e) {
      if (this.running?.index === index && !cts.token.isCancellationRequested) {
        reply.note = isConnectionLoss(e) ? INTERRUPTED_NOTE : `error: ${(e as Error).message}`;
      }
    } finally {
      if (this.running?.index === index) this.running = undefined;
      cts.dispose();
      this.changed.fire({ kind: 'all' });
      void this.history.save(this.conv);
    }
  }

  /**
   * A sidecar that has not seen this conversation (it was restarted, or the window was
   * reloaded) gets the earlier turns as context in the system prompt.
   */
  private systemFor(before: number): string | undefined {
    if (this.serverKnows.has(this.conv.id)) return undefined;
    const earlier = this.conv.turns.slice(0, before).filter((t) => t.text);
    if (earlier.length === 0) return SYSTEM;
    let transcript = earlier
      .map((t) => `${t.role === 'user' ? 'User' : 'Assistant'}: ${t.text}`)
      .join('\n\n');
    if (transcript.length > 4000) transcript = transcript.slice(-4000);
    return `${SYSTEM}\n\nEarlier in this conversation:\n${transcript}`;
  }

  private onDelta(p: ChatDeltaParams): void {
    const run = this.running;
    if (!run || p.conversationId !== this.conv.id || !p.delta) return;
    this.conv.turns[run.index].text += p.delta;
    this.changed.fire({ kind: 'turn', index: run.index });
  }

  /** Ends the running turn as interrupted (its sidecar died); what streamed so far stays. */
  private interrupt(): void {
    const run = this.running;
    if (!run) return;
    this.running = undefined;
    this.conv.turns[run.index].note = INTERRUPTED_NOTE;
    run.cts.cancel();
    this.changed.fire({ kind: 'all' });
    void this.history.save(this.conv);
  }

  /** Stops the running turn at once; what streamed so far stays. */
  stop(): void {
    const run = this.running;
    if (!run) return;
    this.running = undefined;
    this.conv.turns[run.index].note = 'stopped';
    void this.sidecar.client
      ?.sendRequest(ChatCancelRequest, { conversationId: this.conv.id })
      .catch(() => undefined);
    run.cts.cancel();
    this.changed.fire({ kind: 'all' });
    void this.history.save(this.conv);
  }

  newChat(): void {
    this.stop();
    const old = this.conv.id;
    void this.sidecar.client
      ?.sendRequest(ChatResetRequest, { conversationId: old })
      .catch(() => undefined);
    this.conv = fresh();
    void this.history.save(this.conv);
    this.changed.fire({ kind: 'all' });
  }

  dispose(): void {
    this.stop();
    for (const s of this.subs) s.dispose();
    this.changed.dispose();
  }
}
