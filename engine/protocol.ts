// The one file the extension and the sidecar share: every custom `leapfrog/` message, its
// params and its result. Standard LSP messages (initialize, document sync,
// textDocument/inlineCompletion, $/cancelRequest, work-done progress) are not repeated here.
// Only vscode-jsonrpc / vscode-languageserver-protocol may be imported, so that the
// extension can bundle this file without pulling in the engine.
import { NotificationType, RequestType, RequestType0 } from 'vscode-jsonrpc';
import type { WorkDoneProgressParams } from 'vscode-languageserver-protocol';

/** Bumped whenever a message below changes shape; the server reports it on initialize. */
export const LEAPFROG_PROTOCOL_VERSION = 3; // 3: models, endpoint, download, language-model messages

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
  /** A model download failed (HTTP error, cut connection, wrong sha256, not a GGUF). */
  DownloadFailed: -32006,
  /** The download's destination already exists and `overwrite` was not set. */
  DownloadFileExists: -32007,
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
  /**
   * An OpenAI-compatible server (Leapfrog's `serve`, llama.cpp's server, Ollama, vLLM) that
   * completions and chat go to instead of the local model, which is then not loaded. Absent
   * or empty: the server's --endpoint, else the local model.
   */
  endpoint?: string;
  /** The model id to ask the endpoint for; absent or empty: the first of its /v1/models. */
  endpointModel?: string;
  /**
   * Bearer key for the endpoint. Never a VS Code setting: the extension keeps it in
   * SecretStorage and sends it here and in didChangeConfiguration (`settings.leapfrog`).
   */
  endpointApiKey?: string;
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
  /** As in LeapfrogInitializationOptions; a change switches between endpoint and local model. */
  endpoint?: string;
  endpointModel?: string;
  endpointApiKey?: string;
  completion?: {
    enabled?: boolean;
    languages?: Record<string, boolean>;
    debounceMs?: number;
    maxTokens?: number;
    /**
     * The server answers an inline completion by then with what it has (0: waits for the
     * whole suggestion); see CompletionOptions.deadlineMs.
     */
    deadlineMs?: number;
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

/** What probing found at an endpoint: which API it speaks beyond OpenAI's. */
export type EndpointKind = 'leapfrog' | 'llama.cpp' | 'ollama' | 'openai';
/**
 * How completions are asked for: llama.cpp's `/infill` (prefix, suffix and other files),
 * `/v1/completions` with `suffix` (Ollama, Leapfrog), or with the prefix only (vLLM).
 */
export type EndpointCompletionMode = 'infill' | 'suffix' | 'prefix';
export type EndpointState = 'probing' | 'ok' | 'down';

export interface EndpointStatus {
  /** The server's base URL (a trailing `/v1` removed). */
  url: string;
  /** Absent until a probe has succeeded. */
  kind?: EndpointKind;
  completion?: EndpointCompletionMode;
  /** The model the requests name (or, where the server ignores the name, the one it lists). */
  model?: string;
  /** `down`: unreachable, refused the key, or failing (5xx); re-probed with backoff. */
  state: EndpointState;
  /** Why it is down. */
  message?: string;
}

export interface StatusResult {
  state: EngineState;
  /** Human-readable reason for `error` (and progress text while `loading`). */
  message?: string;
  /** Why the last model load failed while the previous model kept serving (state `ready`). */
  loadError?: string;
  /**
   * The loaded model's (or draft's) file was deleted, truncated or replaced on disk after it
   * was loaded: the loaded copy keeps serving (the engine no longer reads the file), and a
   * reload picks up the file as it is now. Absent while the files are as loaded.
   */
  modelFileChanged?: string;
  /** Present while completions and chat go to an endpoint (no local model is loaded). */
  endpoint?: EndpointStatus;
  /** Where the loaded model's kernels run: `cpu:avx512`, `cuda:<GPU name>`; `remote` while
   * an endpoint serves (see `endpoint`). */
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
    /** Answered in part (the first line, or at the deadline); the rest came in the background. */
    completionsAtDeadline: number;
    /** leapfrog/prefetch notifications acted on. */
    prefetches: number;
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

// ---------------------------------------------------------------- model discovery

/** Where a discovered model was found (engine/models/discovery/). */
export type ModelSource = 'ollama' | 'lmstudio' | 'huggingface' | 'llama.cpp' | 'folder';
export const MODEL_SOURCES: readonly ModelSource[] = [
  'ollama',
  'lmstudio',
  'huggingface',
  'llama.cpp',
  'folder',
];

/** One GGUF found where users keep models, described from its header (`leapfrog models`). */
export interface DiscoveredModel {
  source: ModelSource;
  /** As the source names it: `qwen2.5-coder:7b` (Ollama), `org/repo/file` (Hugging Face)… */
  name: string;
  /** The file to load (for the Hugging Face cache, the snapshot path: a link into blobs/). */
  path: string;
  bytes: number;
  /** null where the header could not be read (`reason` says why). */
  architecture: string | null;
  /** Weights, counted from the tensor shapes. */
  parameters: number | null;
  /** general.file_type's name (Q4_K_M…), else the type holding most weights. */
  quantization: string | null;
  /** Training context (`<arch>.context_length`). */
  context: number | null;
  /** Has fill-in-the-middle tokens (and does not say it never learned them). */
  fim: boolean;
  chatTemplate: boolean;
  /** 16 hex digits of the tokenizer (model, pre-tokenizer, token list): equal = same vocabulary. */
  fingerprint: string | null;
  /** The engine can load it: a supported architecture, tensor types and tokenizer. */
  supported: boolean;
  /** Why not, when `supported` is false. */
  reason?: string;
  /** The path of the best draft model for this one, when a discovered model fits. */
  draft?: string;
  /** Paths of the models this one is the best draft for. */
  draftFor?: string[];
  /** The same file found again (another Ollama tag, another folder). */
  alsoAs?: { source: ModelSource; name: string; path: string }[];
}

/** A target and the draft proposed for it (same fingerprint, at most 1/4 the parameters). */
export interface ModelPair {
  target: string;
  draft: string;
}

export interface ModelsParams {
  /** Folders to search besides the known stores (the `leapfrog.modelFolders` setting). */
  folders?: string[];
}

export interface ModelsResult {
  models: DiscoveredModel[];
  pairs: ModelPair[];
  /** The folders looked in, for "none found" messages. */
  searched: string[];
}

/** Lists the GGUFs in Ollama, LM Studio, the Hugging Face and llama.cpp caches, and `folders`. */
export const ModelsRequest = new RequestType<ModelsParams, ModelsResult, void>('leapfrog/models');

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

// ---------------------------------------------------------------- stateless chat (VS Code's Language Model API)

export interface ChatMessagesParams {
  /**
   * Chosen by the client, unique per request: the reply streams as `leapfrog/chatDelta` with
   * this as `conversationId`, and `leapfrog/chatCancel` with it stops the request.
   */
  requestId: string;
  /**
   * The whole conversation, oldest first, ending with the user's message. System messages
   * are joined into one system prompt (the server's default when there is none);
   * consecutive messages of one role are joined. Nothing is remembered after the request.
   */
  messages: ChatMessage[];
  maxTokens?: number;
  temperature?: number;
}

/** One reply to a whole message list; streams `leapfrog/chatDelta` like `leapfrog/chat`. */
export const ChatMessagesRequest = new RequestType<ChatMessagesParams, ChatResult, void>(
  'leapfrog/chatMessages',
);

/** The loaded model as a chat model, for VS Code's model picker. */
export interface ChatModelInfo {
  /** GGUF general.name, else the file name. */
  name: string;
  path: string;
  architecture: string;
  /** Tokens of context one request has (prompt + reply). */
  contextSize: number;
  /** Reply tokens a request gets when it does not ask for fewer or more. */
  defaultMaxTokens: number;
  /** The most reply tokens the server grants one request. */
  maxOutputTokens: number;
  /** false: the GGUF has no chat template and prompts are ChatML. */
  hasChatTemplate: boolean;
}

/** `model` is null while no model is loaded. */
export const ChatModelRequest = new RequestType0<{ model: ChatModelInfo | null }, void>(
  'leapfrog/chatModel',
);

export interface CountTokensParams {
  text: string;
}

/** Tokens `text` takes with the loaded model's tokenizer (no BOS/EOS, special text as text). */
export const CountTokensRequest = new RequestType<CountTokensParams, { tokens: number }, void>(
  'leapfrog/countTokens',
);

// ---------------------------------------------------------------- model download

export interface DownloadModelParams {
  /** Chosen by the client: `leapfrog/downloadProgress` carries it. */
  downloadId: string;
  /** http(s) URL of the GGUF; redirects are followed. */
  url: string;
  /** Absolute folder to download into (created when missing). */
  folder: string;
  /** Name of the file in `folder`; default: the URL's last path segment. */
  fileName?: string;
  /** Expected sha256 (hex); checked with the one the server announces, if any. */
  sha256?: string;
  /** Replace an existing file of that name (otherwise: DownloadFileExists). */
  overwrite?: boolean;
}

export interface DownloadModelResult {
  path: string;
  bytes: number;
  /** sha256 of the file, hex. */
  sha256: string;
  /** What the sha256 was checked against: the server's header, the user's, both, or none. */
  verified: 'server' | 'user' | 'both' | 'none';
  /** Bytes a previous, interrupted download had already fetched (0: from the start). */
  resumedFrom: number;
}

/**
 * Downloads a model into `folder` as `<name>.part` (resumed with a Range request when one is
 * there), checks its sha256, and renames it into place only when whole and checked. A
 * cancel ($/cancelRequest) or a cut connection keeps the `.part` for the next attempt.
 */
export const DownloadModelRequest = new RequestType<DownloadModelParams, DownloadModelResult, void>(
  'leapfrog/downloadModel',
);

export interface DownloadProgressParams {
  downloadId: string;
  /** Bytes of the file on disk so far (including a resumed part). */
  received: number;
  /** Size of the whole file; null when the server does not say. */
  total: number | null;
}

export const DownloadProgressNotification = new NotificationType<DownloadProgressParams>(
  'leapfrog/downloadProgress',
);

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

/**
 * An item of Leapfrog's `textDocument/inlineCompletion` answer. `partial`: answered at the
 * deadline, the rest still being generated on the server — the client asks again as the user
 * types rather than serve the rest from its own typed-ahead memory.
 */
export interface LeapfrogInlineCompletionItem {
  insertText: string;
  range: { start: { line: number; character: number }; end: { line: number; character: number } };
  partial?: boolean;
}

// ---------------------------------------------------------------- prefetch

/**
 * "The user will be at this cursor soon": a file was opened or focused, or a suggestion was
 * accepted. The server computes the suggestion there in the background (reading the file
 * into the model's cache on the way), so that the request that follows is answered at once.
 */
export interface PrefetchParams {
  uri: string;
  position: { line: number; character: number };
}
export const PrefetchNotification = new NotificationType<PrefetchParams>('leapfrog/prefetch');

/**
 * Server → client: the suggestion answered in part for this cursor (`partial`) has been
 * generated to its end, and the engine's typed-ahead memory holds more of it than was
 * answered. A client whose document and cursor are still as they were asks again (VS Code:
 * `editor.action.inlineSuggest.trigger`) and shows the whole suggestion.
 */
export interface CompletionGrownParams {
  uri: string;
  position: { line: number; character: number };
}
export const CompletionGrownNotification = new NotificationType<CompletionGrownParams>(
  'leapfrog/completionGrown',
);
