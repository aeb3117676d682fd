// What the Language Model provider needs of the engine, over any JSON-RPC connection to
// the sidecar: the extension's LanguageClient, or a test's MessageConnection. No `vscode`
// import at run time, so the provider's logic runs in plain mocha as well.
import type { CancellationToken, RequestType, RequestType0 } from 'vscode-jsonrpc';
import {
  ChatCancelRequest,
  ChatMessagesRequest,
  ChatModelRequest,
  CountTokensRequest,
  type ChatDeltaParams,
  type ChatMessagesParams,
  type ChatModelInfo,
  type ChatResult,
} from '../../engine/protocol';

export interface LmEngine {
  /** The loaded model; null while none is (or no sidecar runs). */
  chatModel(): Promise<ChatModelInfo | null>;
  /** Tokens in `text` by the model's tokenizer; rejects while no model is loaded. */
  countTokens(text: string, token?: CancellationToken): Promise<number>;
  chat(params: ChatMessagesParams, token?: CancellationToken): Promise<ChatResult>;
  /** Stops a running request (as well as its token's cancellation). */
  cancel(requestId: string): void;
  onChatDelta(listener: (d: ChatDeltaParams) => void): { dispose(): void };
}

/** The requests the port sends: both LanguageClient and MessageConnection have these. */
export interface LmConnection {
  sendRequest<R, E>(type: RequestType0<R, E>, token?: CancellationToken): Promise<R>;
  sendRequest<P, R, E>(
    type: RequestType<P, R, E>,
    params: P,
    token?: CancellationToken,
  ): Promise<R>;
}

export function connectionEngine(
  connection: () => LmConnection | undefined,
  onChatDelta: LmEngine['onChatDelta'],
  /** Why there is no connection, for the error a request then gets. */
  whyNotRunning: () => string,
): LmEngine {
  const conn = (): LmConnection => {
    const c = connection();
    if (!c) throw new Error(`the engine is not running (${whyNotRunning()})`);
    return c;
  };
  return {
    async chatModel() {
      const c = connection();
      if (!c) return null;
      return (await c.sendRequest(ChatModelRequest)).model;
    },
    async countTokens(text, token) {
      return (await conn().sendRequest(CountTokensRequest, { text }, token)).tokens;
    },
    chat: async (params, token) => conn().sendRequest(ChatMessagesRequest, params, token),
    cancel(requestId) {
      void connection()
        ?.sendRequest(ChatCancelRequest, { conversationId: requestId })
        .catch(() => undefined);
    },
    onChatDelta,
  };
}
