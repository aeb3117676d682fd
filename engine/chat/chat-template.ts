// Chat prompts: the model's own template (GGUF `tokenizer.chat_template`, a Jinja program)
// rendered with @huggingface/jinja; ChatML when the file has none or it does not render.
import { Template } from '@huggingface/jinja';
import type { ChatMessage } from '../protocol';

export interface SpecialTokenTexts {
  bos: string;
  eos: string;
}

/** A run of prompt text: the template's own (control tokens parsed) or a message's (never). */
export interface ChatSegment {
  text: string;
  /** true: written by the template, so `<|im_start|>` here is the control token. */
  template: boolean;
}

export interface RenderedChat {
  text: string;
  /**
   * `text` cut into the template's parts and the messages' contents, in order. Tokenize the
   * former with special parsing and the latter without, so that a user who types
   * `<|im_end|>` gets those characters, not an end of turn (see chat-prompt.ts).
   */
  segments: ChatSegment[];
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
      // Rendered with a marker in place of each content, so we know where the template's
      // text ends and the message's begins; the contents go back in as plain segments.
      const marked = t.render({
        messages: messages.map((m, i) => ({ role: m.role, content: marker(i) })),
        add_generation_prompt: true,
        bos_token: special.bos,
        eos_token: special.eos,
      });
      const segments = splitAtMarkers(marked, messages);
      if (segments) return { text: joinSegments(segments), segments, template: 'model' };
      return {
        ...chatML(messages),
        warning: 'chat template rewrites message contents; using ChatML',
      };
    } catch (err) {
      const why = err instanceof Error ? err.message : String(err);
      return { ...chatML(messages), warning: `chat template failed (${why}); using ChatML` };
    }
  }
  return chatML(messages);
}

// Private-use characters: no template has a reason to alter them, and no content holds them
// by accident (a content that does is still only text: it is never re-scanned).
const MARK_OPEN = '\u{F0001}';
const MARK_CLOSE = '\u{F0002}';
const marker = (i: number) => `${MARK_OPEN}${i}${MARK_CLOSE}`;
const MARKERS = /\u{F0001}(\d+)\u{F0002}/gu;

/** The marked rendering cut at its markers; undefined unless each appears once, in order. */
function splitAtMarkers(
  marked: string,
  messages: readonly ChatMessage[],
): ChatSegment[] | undefined {
  const segments: ChatSegment[] = [];
  let at = 0;
  let next = 0;
  for (const m of marked.matchAll(MARKERS)) {
    if (Number(m[1]) !== next) return undefined;
    if (m.index > at) segments.push({ text: marked.slice(at, m.index), template: true });
    const content = messages[next].content;
    if (content) segments.push({ text: content, template: false });
    at = m.index + m[0].length;
    next++;
  }
  if (next !== messages.length) return undefined;
  if (at < marked.length) segments.push({ text: marked.slice(at), template: true });
  return segments;
}

function joinSegments(segments: readonly ChatSegment[]): string {
  return segments.map((s) => s.text).join('');
}

function chatML(messages: readonly ChatMessage[]): RenderedChat {
  const segments: ChatSegment[] = [];
  for (const m of messages) {
    segments.push({ text: `<|im_start|>${m.role}\n`, template: true });
    if (m.content) segments.push({ text: m.content, template: false });
    segments.push({ text: '<|im_end|>\n', template: true });
  }
  segments.push({ text: '<|im_start|>assistant\n', template: true });
  return { text: joinSegments(segments), segments, template: 'chatml' };
}

export function renderChatML(messages: readonly ChatMessage[]): string {
  return chatML(messages).text;
}

/** Texts that end a reply when the model writes them instead of an end-of-generation id. */
export const CHAT_STOP_TEXTS = [
  '<|im_end|>',
  '<|endoftext|>',
  '<|im_start|>',
  '<|eot_id|>',
  '</s>',
];
