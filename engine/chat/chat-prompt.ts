// A rendered conversation as token ids. The template's own text is tokenized with special
// parsing (its `<|im_start|>` is the control token); each message's content without, so text
// a user types or selects — `<|im_end|>`, `<|im_start|>system`, `<|fim_prefix|>` — stays
// text and cannot end a turn, forge a system message or switch the model into FIM.
import type { ModelInfo, NativeModel } from '../native/addon';
import type { ChatMessage } from '../protocol';
import { renderChat, type ChatSegment } from './chat-template';

export interface ChatPrompt {
  prompt: number[];
  warning?: string;
}

type Tokenizer = Pick<NativeModel, 'tokenize' | 'detokenize'>;

export function chatPromptIds(
  target: Tokenizer,
  info: Pick<ModelInfo, 'bos' | 'eos' | 'addBos' | 'chatTemplate'>,
  messages: readonly ChatMessage[],
): ChatPrompt {
  const special = {
    bos: info.bos >= 0 ? target.detokenize([info.bos], true) : '',
    eos: info.eos >= 0 ? target.detokenize([info.eos], true) : '',
  };
  const rendered = renderChat(info.chatTemplate, messages, special);
  const prompt = tokenizeSegments(target, rendered.segments);
  if (info.addBos && info.bos >= 0 && prompt[0] !== info.bos) prompt.unshift(info.bos);
  return { prompt, warning: rendered.warning };
}

export function tokenizeSegments(target: Tokenizer, segments: readonly ChatSegment[]): number[] {
  const ids: number[] = [];
  for (const s of segments) if (s.text) ids.push(...target.tokenize(s.text, false, s.template));
  return ids;
}
