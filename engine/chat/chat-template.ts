// Chat prompts: the model's own template (GGUF `tokenizer.chat_template`, a Jinja program)
// rendered with @huggingface/jinja; ChatML when the file has none or it does not render.
import { Template } from '@huggingface/jinja';
import type { ChatMessage } from '../protocol';

export interface SpecialTokenTexts {
  bos: string;
  eos: string;
}

export interface RenderedChat {
  text: string;
  /** 'model' when the GGUF's template rendered, 'chatml' for the fallback. */
  template: 'model' | 'chatml';
  /** Why the model's template was not used, when it exists but failed. */
  warning?: string;
}

const templateCache = new Map<string, Template>();

export function renderChat(
  source: string,
  messages: readonly ChatMessage[],
  special: SpecialTokenTexts,
): RenderedChat {
  if (source.trim()) {
    try {
      let t = templateCache.get(source);
      if (!t) {
        t = new Template(source);
        templateCache.set(source, t);
      }
      const text = t.render({
        messages: messages.map((m) => ({ role: m.role, content: m.content })),
        add_generation_prompt: true,
        bos_token: special.bos,
        eos_token: special.eos,
      });
      return { text, template: 'model' };
    } catch (err) {
      const why = err instanceof Error ? err.message : String(err);
      return {
        text: renderChatML(messages),
        template: 'chatml',
        warning: `chat template failed (${why}); using ChatML`,
      };
    }
  }
  return { text: renderChatML(messages), template: 'chatml' };
}

export function renderChatML(messages: readonly ChatMessage[]): string {
  let out = '';
  for (const m of messages) out += `<|im_start|>${m.role}\n${m.content}<|im_end|>\n`;
  return out + '<|im_start|>assistant\n';
}

/** Texts that end a reply when the model writes them instead of an end-of-generation id. */
export const CHAT_STOP_TEXTS = [
  '<|im_end|>',
  '<|endoftext|>',
  '<|im_start|>',
  '<|eot_id|>',
  '</s>',
];
