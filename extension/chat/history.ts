// The chat transcript, kept in the extension's globalState so it survives a window reload (the
// webview also keeps its own copy in its state, only so it can paint before we answer).
import type * as vscode from 'vscode';

export interface Turn {
  role: 'user' | 'assistant';
  text: string;
  /** Set on an assistant turn that was stopped, cut short or failed. */
  note?: string;
}

export interface Conversation {
  id: string;
  turns: Turn[];
}

const KEY = 'leapfrog.chat.conversation';
const MAX_TURNS = 200;

export class ChatHistory {
  constructor(private readonly state: vscode.Memento) {}

  load(): Conversation {
    const c = this.state.get<Conversation>(KEY);
    return c && Array.isArray(c.turns) ? c : fresh();
  }

  save(c: Conversation): Thenable<void> {
    return this.state.update(KEY, { id: c.id, turns: c.turns.slice(-MAX_TURNS) });
  }
}

export function fresh(): Conversation {
  return {
    id: `chat-${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 8)}`,
    turns: [],
  };
}
