// VS Code's Language Model Chat Provider API, finalized in VS Code 1.104. @types/vscode is
// pinned to 1.100 (the e2e suite runs code-server 4.100.3, where the API is absent), so the
// few types Leapfrog uses are declared here, in the shape of @types/vscode 1.104.0's
// index.d.ts, and the API is found at run time (`languageModelApi`), never assumed.
import type {
  CancellationToken,
  Disposable,
  Event,
  LanguageModelChatTool,
  LanguageModelTextPart,
  LanguageModelToolCallPart,
  LanguageModelToolResultPart,
  Progress,
} from 'vscode';

/** LanguageModelChatMessageRole's values (System = 3 comes from VS Code's proposed API). */
export const ROLE_USER = 1;
export const ROLE_ASSISTANT = 2;
export const ROLE_SYSTEM = 3;

/** LanguageModelChatToolMode.Required: the caller insists on a tool call. */
export const TOOL_MODE_REQUIRED = 2;

export interface LanguageModelChatInformation {
  readonly id: string;
  readonly name: string;
  readonly family: string;
  readonly tooltip?: string;
  readonly detail?: string;
  readonly version: string;
  readonly maxInputTokens: number;
  readonly maxOutputTokens: number;
  readonly capabilities: {
    readonly imageInput?: boolean;
    readonly toolCalling?: boolean | number;
  };
}

export interface LanguageModelChatRequestMessage {
  readonly role: number;
  /** LanguageModelTextPart, tool parts, data parts, or parts of a later API. */
  readonly content: ReadonlyArray<unknown>;
  readonly name: string | undefined;
}

export interface ProvideLanguageModelChatResponseOptions {
  readonly modelOptions?: { readonly [name: string]: unknown };
  readonly tools?: readonly LanguageModelChatTool[];
  readonly toolMode: number;
}

export interface PrepareLanguageModelChatModelOptions {
  readonly silent: boolean;
}

export type LanguageModelResponsePart =
  LanguageModelTextPart | LanguageModelToolResultPart | LanguageModelToolCallPart;

export interface LanguageModelChatProvider<
  T extends LanguageModelChatInformation = LanguageModelChatInformation,
> {
  readonly onDidChangeLanguageModelChatInformation?: Event<void>;
  provideLanguageModelChatInformation(
    options: PrepareLanguageModelChatModelOptions,
    token: CancellationToken,
  ): Thenable<T[]> | T[];
  provideLanguageModelChatResponse(
    model: T,
    messages: readonly LanguageModelChatRequestMessage[],
    options: ProvideLanguageModelChatResponseOptions,
    progress: Progress<LanguageModelResponsePart>,
    token: CancellationToken,
  ): Thenable<void>;
  provideTokenCount(
    model: T,
    text: string | LanguageModelChatRequestMessage,
    token: CancellationToken,
  ): Thenable<number>;
}

/** The part of `vscode.lm` that exists from 1.104 on. */
export interface LanguageModelProviderApi {
  registerLanguageModelChatProvider(
    vendor: string,
    provider: LanguageModelChatProvider,
  ): Disposable;
}

/** `vscode.lm` when it can register chat providers (VS Code ≥ 1.104), else undefined. */
export function languageModelApi(lm: unknown): LanguageModelProviderApi | undefined {
  const api = lm as Partial<LanguageModelProviderApi> | undefined;
  return typeof api?.registerLanguageModelChatProvider === 'function'
    ? (api as LanguageModelProviderApi)
    : undefined;
}
