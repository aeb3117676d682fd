// The one file the extension and the sidecar share: every custom `leapfrog/` message, its
// params and its result. Standard LSP messages (initialize, document sync,
// textDocument/inlineCompletion, $/cancelRequest, work-done progress) are not repeated here.
// Only vscode-jsonrpc / vscode-languageserver-protocol may be imported, so that the
// extension can bundle this file without pulling in the engine.
import { NotificationType, RequestType, RequestType0 } from 'vscode-jsonrpc';
import type { WorkDoneProgressParams } from 'vscode-languageserver-protocol';

/** Bumped whenever a message below changes shape; the server reports it on initialize. */
export const LEAPFROG_PROTOCOL_VERSION = 2;

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

// ---------------------------------------------------------------- generation configuration

export type SpeculationMode = 'auto' | 'off' | 'ngram' | 'draft';
export const SPECULATION_MODES: readonly SpeculationMode[] = ['auto', 'off', 'ngram', 'draft'];
export type BackendKind = 'auto' | 'cpu' | 'cuda' | 'metal';
export const BACKENDS: readonly BackendKind[] = ['auto', 'cpu', 'cuda', 'metal'];

/** Least and largest draft length. The engine verifies 1 + 63 = 64 rows in one pass. */
export const MIN_DRAFT_BUDGET = 0;
export const MAX_DRAFT_BUDGET = 63;

export interface SamplingConfig {
  temperature: number; // 0 = greedy
  topK: number; // 0 = off
  topP: number; // 1 = off
  minP: number; // 0 = off
  repeatPenalty: number; // 1 = off
  repeatLastN: number;
  seed: number;
}

/** How drafts are made and verified. */
export interface SpeculationConfig {
  mode: SpeculationMode;
  /** Largest draft length (MIN_DRAFT_BUDGET..MAX_DRAFT_BUDGET). */
  budget: number;
  /** false: always draft `budget` tokens instead of letting the controller choose. */
  adaptive: boolean;
  /** Draft token trees (branching where the drafter is unsure) instead of chains. */
  tree: boolean;
}

/** One generation configuration: what a request runs with, and where its model runs. */
export interface GenerationConfig {
  maxTokens: number;
  stopAtEog: boolean;
  sampling: SamplingConfig;
  speculation: SpeculationConfig;
  backend: BackendKind;
  /** CPU threads; 0 = the machine's physical cores. */
  threads: number;
  /** Context per session; capped by the model's training context (see sessionContextSize). */
  contextSize: number;
}

/**
 * THE table of defaults. Every front end (inline completion, chat, explain, `leapfrog
 * generate` and `complete`, the benchmarks) starts from it and applies its overrides in
 * engine/generation/generation-config.ts; the native addon's defaultGenerateParams() and
 * package.json's `leapfrog.*` settings must agree with it (unit and cli tests check both).
 */
export const GENERATION_DEFAULTS: GenerationConfig = {
  maxTokens: 128,
  stopAtEog: true,
  sampling: {
    temperature: 0,
    topK: 40,
    topP: 0.95,
    minP: 0.05,
    repeatPenalty: 1,
    repeatLastN: 64,
    seed: 0,
  },
  speculation: { mode: 'auto', budget: 16, adaptive: true, tree: false },
  backend: 'auto',
  threads: 0,
  contextSize: 4096,
};

// ---------------------------------------------------------------- settings

/**
 * `initializationOptions` of `initialize`. Paths are expanded by the client (`~`,
 * `${workspaceFolder}`); absent fields take the server's defaults (its command line, else
 * GENERATION_DEFAULTS and the bundled model).
 */
export interface LeapfrogInitializationOptions {
  speculation?: { mode?: SpeculationMode; budget?: number };
  backend?: BackendKind;
  /** 0 or absent: the server's default (its --threads, else the physical cores). */
  threads?: number;
  /** Target model GGUF; the bundled model when absent or empty. */
  model?: string;
  /** Draft model GGUF (same vocabulary as the target); null: none; absent: the default. */
  draft?: string | null;
}

/**
 * The `leapfrog` settings section as VS Code nests it: `workspace/didChangeConfiguration`
 * carries it as `params.settings.leapfrog`. Fields that are absent keep their current
 * value; an empty `model`/`draftModel` means the default. Paths may use `~` and
 * `${workspaceFolder}` (the server expands them, see expandSettingPath). Mode and budget
 * apply to the next request; model, draftModel, backend and threads reload the model.
 */
export interface LeapfrogSettings {
  speculation?: { mode?: SpeculationMode; budget?: number };
  backend?: BackendKind;
  threads?: number;
  model?: string;
  draftModel?: string;
  completion?: {
    enabled?: boolean;
    languages?: Record<string, boolean>;
    debounceMs?: number;
    maxTokens?: number;
  };
}

/** Expands `~/` and `${workspaceFolder}` in a path setting, on either side of the wire. */
export function expandSettingPath(
  path: string,
  env: { home?: string; workspaceFolder?: string },
): string {
  let out = path.trim();
  if (out.startsWith('~/') && env.home) out = env.home + out.slice(1);
  if (env.workspaceFolder) out = out.replace(/\$\{workspaceFolder\}/g, env.workspaceFolder);
  return out;
}

// ---------------------------------------------------------------- status

export type EngineState = 'loading' | 'ready' | 'busy' | 'error';

export interface StatusResult {
  state: EngineState;
  /** Human-readable reason for `error` (and progress text while `loading`). */
  message?: string;
  /** Why the last model load failed while the previous model kept serving (state `ready`). */
  loadError?: string;
  /** Where the loaded model's kernels run: `cpu:avx512`, `cuda:<GPU name>`. */
  backend: string;
  /** CPU threads the loaded model runs with (0 while none is loaded). */
  threads: number;
  /** Model names (GGUF general.name, else file name); null when none is loaded. */
  model: string | null;
  draft: string | null;
  modelPath: string | null;
  draftPath: string | null;
  /** Decode speed of the last finished generation. */
  lastTokensPerSecond: number;
  /** Tokens produced per target forward pass in the last generation (1 without speculation). */
  acceptedPerPass: number;
  /** The speculation settings in effect, and running totals over the server's life. */
  speculation: SpeculationStatus;
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

export interface SpeculationStatus {
  mode: SpeculationMode;
  budget: number;
  /** Totals over every generation (completions and chat turns) since the server started. */
  drafted: number;
  accepted: number;
  targetPasses: number;
  /** The most tokens one target pass verified (1 + the longest draft); 0 before any pass. */
  maxPassTokens: number;
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
