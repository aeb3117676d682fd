// The one file the extension and the sidecar share: every custom `leapfrog/` message, its
// params and its result. Standard LSP messages (initialize, document sync,
// textDocument/inlineCompletion, $/cancelRequest, work-done progress) are not repeated here.
// Only vscode-jsonrpc / vscode-languageserver-protocol may be imported, so that the
// extension can bundle this file without pulling in the engine.
import { NotificationType, RequestType, RequestType0 } from 'vscode-jsonrpc';
import type { WorkDoneProgressParams } from 'vscode-languageserver-protocol';

/** Bumped whenever a message below changes shape; the server reports it on initialize. */
export const LEAPFROG_PROTOCOL_VERSION = 1;

/** Error codes of `leapfrog/` failures (JSON-RPC's reserved server range is -32099..-32000). */
export const LeapfrogErrorCodes = {
  /** No model is loaded (none configured, or the last load failed); `message` says why. */
  NoModel: -32001,
  /** A model file is missing, truncated, corrupt or unsupported. */
  ModelLoadFailed: -32002,
  /** The prompt does not fit the model's context. */
  PromptTooLong: -32003,
  /** The native engine failed while generating. */
  GenerationFailed: -32004,
  /** A conversation id that the server does not know. */
  UnknownConversation: -32005,
} as const;

/** `initializationOptions` the client may send with `initialize`. */
export interface LeapfrogInitializationOptions {
  /** Target model GGUF; the bundled model when absent. */
  model?: string;
  /** Draft model GGUF (same vocabulary as the target); none when absent or null. */
  draft?: string | null;
  threads?: number;
}

// ---------------------------------------------------------------- status

export type EngineState = 'loading' | 'ready' | 'busy' | 'error';

export interface StatusResult {
  state: EngineState;
  /** Human-readable reason for `error` (and progress text while `loading`). */
  message?: string;
  /** For example `cpu:avx512` — where the kernels run. */
  backend: string;
  /** Model names (GGUF general.name, else file name); null when none is loaded. */
  model: string | null;
  draft: string | null;
  modelPath: string | null;
  draftPath: string | null;
  /** Decode speed of the last finished generation. */
  lastTokensPerSecond: number;
  /** Tokens produced per target forward pass in the last generation (1 without speculation). */
  acceptedPerPass: number;
  /** Native sessions currently allocated (KV caches). Constant while a model stays loaded. */
  openSessions: number;
  /** Native generations in flight (0 or 1: one engine). */
  activeGenerations: number;
  queuedCompletions: number;
  queuedChats: number;
  /** Chat turns in progress (running, queued or preempted). */
  activeChats: number;
  memory: { rss: number; heapUsed: number; external: number };
  counters: {
    completions: number;
    completionsCancelled: number;
    completionsSuperseded: number;
    typedAheadHits: number;
    chatTurns: number;
    chatPreemptions: number;
    shown: number;
    accepted: number;
  };
}

export const StatusRequest = new RequestType0<StatusResult, void>('leapfrog/status');

/** Sent whenever the state, the model or the last-generation figures change. */
export const DidChangeStatusNotification = new NotificationType<StatusResult>(
  'leapfrog/didChangeStatus',
);

// ---------------------------------------------------------------- models

export interface LoadModelParams extends WorkDoneProgressParams {
  model: string;
  /** null or absent: no draft model (n-gram speculation only). */
  draft?: string | null;
}

export interface LoadModelResult {
  model: string;
  draft: string | null;
  architecture: string;
  nParams: number;
  /** Which FIM template the context builder recognised (`none` = plain continuation). */
  fimTemplate: string;
  loadMs: number;
}

/** Loads a model and switches to it; the previous model keeps serving if the load fails. */
export const LoadModelRequest = new RequestType<LoadModelParams, LoadModelResult, void>(
  'leapfrog/loadModel',
);

// ---------------------------------------------------------------- chat and explain

export interface ChatMessage {
  role: 'system' | 'user' | 'assistant';
  content: string;
}

export interface ChatParams {
  /** Chosen by the client; several conversations may run at once. */
  conversationId: string;
  /** The new user turn; earlier turns of this conversation are kept by the server. */
  message: string;
  /** Replaces the conversation's system prompt when given. */
  system?: string;
  maxTokens?: number;
  temperature?: number;
}

export type ChatFinishReason = 'stop' | 'length' | 'cancelled' | 'error';

export interface ChatResult {
  conversationId: string;
  /** The whole assistant reply (the concatenation of every delta). */
  text: string;
  finishReason: ChatFinishReason;
  stats: { promptTokens: number; generated: number; tokensPerSecond: number; preemptions: number };
}

/** Runs one turn; the reply streams as `leapfrog/chatDelta` and the result closes it. */
export const ChatRequest = new RequestType<ChatParams, ChatResult, void>('leapfrog/chat');

export interface ChatDeltaParams {
  conversationId: string;
  /** Text to append to the reply; empty on the final (done) notification. */
  delta: string;
  done: boolean;
  finishReason?: ChatFinishReason;
}

export const ChatDeltaNotification = new NotificationType<ChatDeltaParams>('leapfrog/chatDelta');

export interface ChatCancelParams {
  conversationId: string;
}

/** Stops the running turn of a conversation ($/cancelRequest on `leapfrog/chat` works too). */
export const ChatCancelRequest = new RequestType<ChatCancelParams, { cancelled: boolean }, void>(
  'leapfrog/chatCancel',
);

/** Forgets a conversation's history. */
export const ChatResetRequest = new RequestType<ChatCancelParams, void, void>('leapfrog/chatReset');

export interface ExplainParams {
  conversationId: string;
  /** The selected text. */
  selection: string;
  fileName: string;
  languageId: string;
  /** Optional extra question ("why is this slow?"). */
  question?: string;
  maxTokens?: number;
}

/** A chat turn carrying the selection; streams `leapfrog/chatDelta` like `leapfrog/chat`. */
export const ExplainRequest = new RequestType<ExplainParams, ChatResult, void>('leapfrog/explain');

// ---------------------------------------------------------------- completion events

export interface CompletionEventParams {
  uri: string;
  /** The text that was shown or accepted. */
  text: string;
}

/** Local statistics only; nothing leaves the machine. */
export const CompletionShownNotification = new NotificationType<CompletionEventParams>(
  'leapfrog/completionShown',
);
export const CompletionAcceptedNotification = new NotificationType<CompletionEventParams>(
  'leapfrog/completionAccepted',
);
