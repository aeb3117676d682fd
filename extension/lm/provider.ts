// Leapfrog's local model as a VS Code Language Model (vendor `leapfrog`): listed while one
// is loaded, answering chat requests by streaming the sidecar's reply as text parts,
// counting tokens with the model's tokenizer. Pure logic over an LmEngine: the vscode
// objects it needs (the text-part constructor, the change event) are handed in.
import { randomUUID } from 'node:crypto';
import type { CancellationToken, Event, LanguageModelTextPart, Progress } from 'vscode';
import type { ChatMessagesParams, ChatModelInfo } from '../../engine/protocol';
import {
  TOOL_MODE_REQUIRED,
  type LanguageModelChatInformation,
  type LanguageModelChatProvider,
  type LanguageModelChatRequestMessage,
  type LanguageModelResponsePart,
  type PrepareLanguageModelChatModelOptions,
  type ProvideLanguageModelChatResponseOptions,
} from './api';
import type { LmEngine } from './engine-port';
import { textOf, toChatMessages } from './messages';

export const VENDOR = 'leapfrog';

export interface LeapfrogModelInformation extends LanguageModelChatInformation {
  /** The GGUF it was listed for. */
  readonly path: string;
}

export class LeapfrogChatProvider implements LanguageModelChatProvider<LeapfrogModelInformation> {
  constructor(
    private readonly engine: LmEngine,
    private readonly textPart: (value: string) => LanguageModelTextPart,
    readonly onDidChangeLanguageModelChatInformation?: Event<void>,
  ) {}

  async provideLanguageModelChatInformation(
    _options: PrepareLanguageModelChatModelOptions,
    _token: CancellationToken,
  ): Promise<LeapfrogModelInformation[]> {
    const model = await this.engine.chatModel().catch(() => null);
    return model ? [modelInformation(model)] : [];
  }

  async provideLanguageModelChatResponse(
    _model: LeapfrogModelInformation,
    messages: readonly LanguageModelChatRequestMessage[],
    options: ProvideLanguageModelChatResponseOptions,
    progress: Progress<LanguageModelResponsePart>,
    token: CancellationToken,
  ): Promise<void> {
    if (options.toolMode === TOOL_MODE_REQUIRED && (options.tools?.length ?? 0) > 0) {
      throw new Error('Leapfrog: the local model cannot call tools');
    }
    if (token.isCancellationRequested) return;
    const requestId = `lm-${randomUUID()}`;
    let streamed = '';
    const deltas = this.engine.onChatDelta((d) => {
      if (d.conversationId !== requestId || !d.delta || token.isCancellationRequested) return;
      streamed += d.delta;
      progress.report(this.textPart(d.delta));
    });
    const cancelled = token.onCancellationRequested(() => this.engine.cancel(requestId));
    try {
      const result = await this.engine.chat(
        { requestId, messages: toChatMessages(messages), ...modelOptions(options.modelOptions) },
        token,
      );
      // The result holds the whole reply: send what no delta brought (none, normally).
      if (!token.isCancellationRequested && result.text.startsWith(streamed)) {
        const rest = result.text.slice(streamed.length);
        if (rest) progress.report(this.textPart(rest));
      }
    } catch (err) {
      if (token.isCancellationRequested) return;
      throw new Error(`Leapfrog: ${err instanceof Error ? err.message : String(err)}`);
    } finally {
      deltas.dispose();
      cancelled.dispose();
    }
  }

  async provideTokenCount(
    _model: LeapfrogModelInformation,
    text: string | LanguageModelChatRequestMessage,
    token: CancellationToken,
  ): Promise<number> {
    const s = typeof text === 'string' ? text : textOf(text.content);
    try {
      return await this.engine.countTokens(s, token);
    } catch {
      return approximateTokenCount(s);
    }
  }
}

/** The model as VS Code's picker shows it; the limits are the sidecar's chat limits. */
export function modelInformation(m: ChatModelInfo): LeapfrogModelInformation {
  const file = m.path.split(/[\\/]/).pop() ?? m.path;
  return {
    id: file.replace(/\.gguf$/i, ''),
    name: m.name,
    family: m.architecture,
    version: file,
    detail: 'local',
    tooltip: `${m.path} — ${m.contextSize} tokens of context, on this machine`,
    // A prompt of maxInputTokens still leaves room for a reply of the default length.
    maxInputTokens: Math.max(1, m.contextSize - m.defaultMaxTokens),
    maxOutputTokens: m.defaultMaxTokens,
    capabilities: { imageInput: false, toolCalling: false },
    path: m.path,
  };
}

/** The request options a caller may set: `temperature`, and `maxTokens` (or `max_tokens`). */
export function modelOptions(
  o: { readonly [name: string]: unknown } | undefined,
): Pick<ChatMessagesParams, 'maxTokens' | 'temperature'> {
  const num = (v: unknown) =>
    typeof v === 'number' && Number.isFinite(v) && v >= 0 ? v : undefined;
  const out: Pick<ChatMessagesParams, 'maxTokens' | 'temperature'> = {};
  const temperature = num(o?.temperature);
  const maxTokens = num(o?.maxTokens ?? o?.max_tokens ?? o?.maxOutputTokens);
  if (temperature !== undefined) out.temperature = temperature;
  if (maxTokens !== undefined) out.maxTokens = Math.floor(maxTokens);
  return out;
}

/**
 * An approximation, used only while the engine cannot count (no model loaded, no sidecar):
 * about four characters a token, as for English text and code with BPE vocabularies.
 */
export function approximateTokenCount(text: string): number {
  return Math.ceil(text.length / 4);
}
