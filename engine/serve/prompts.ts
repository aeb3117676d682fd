// Request text → prompt token ids, by the engine's own rules: a plain prompt as `leapfrog
// generate` tokenizes it, fill-in-the-middle through the model's FIM template (the one
// `leapfrog complete` and the extension use), chat through the GGUF's chat template as the
// chat service renders it.
import type { LoadedEngine } from '../models/model-host';
import { buildFimPrompt, type ExtraChunk, type FimParts } from '../completion/fim-template';
import { chatPromptIds } from '../chat/chat-prompt';
import type { ChatMessage } from '../protocol';
import { badField, contextExceeded } from './api-error';

/** `prompt` of /v1/completions: a string, token ids, or a one-element array of either. */
export function completionPrompt(engine: LoadedEngine, prompt: unknown): number[] {
  let p = prompt;
  if (Array.isArray(p) && p.length === 1 && (typeof p[0] === 'string' || Array.isArray(p[0]))) {
    p = p[0];
  }
  if (typeof p === 'string') return textPrompt(engine, p);
  if (Array.isArray(p) && p.every((id) => typeof id === 'number')) {
    const nVocab = engine.info.nVocab;
    if (p.some((id) => !Number.isInteger(id) || id < 0 || id >= nVocab)) {
      throw badField('prompt', `token ids in 'prompt' must be integers below ${nVocab}`);
    }
    return p as number[];
  }
  if (Array.isArray(p) && p.length > 1) {
    throw badField('prompt', "one prompt per request: 'prompt' may not be a list of prompts");
  }
  throw badField('prompt', "'prompt' must be a string or an array of token ids");
}

/**
 * Special-token text is parsed and BOS added as the model's metadata asks: exactly what
 * `leapfrog generate --prompt` does, so the same text gives the same tokens.
 */
export function textPrompt(engine: LoadedEngine, text: string): number[] {
  return engine.target.tokenize(text, true, true);
}

export interface FimRequest {
  prefix: string;
  suffix: string;
  extra: ExtraChunk[];
  repoName: string;
  filePath: string;
}

/**
 * The FIM prompt, fitted to leave `maxTokens` of the context free: extra chunks go first
 * (oldest first), then the prefix loses lines at its start and the suffix at its end (the
 * suffix keeps at most a quarter of the room). A model without FIM tokens, or whose metadata
 * says it did not learn them, gets the prefix alone, as its completions do.
 */
export function fimPrompt(
  engine: LoadedEngine,
  req: FimRequest,
  maxTokens: number,
): { prompt: number[]; truncated: boolean } {
  const tokenize = (t: string) => engine.target.tokenize(t, false, false);
  const build = (p: FimParts) => buildFimPrompt(engine.fim, p, tokenize);
  const room = engine.nCtx - maxTokens;
  let parts: FimParts = { ...req };
  let prompt = build(parts);
  if (prompt.length <= room) return { prompt, truncated: false };
  while (parts.extra.length > 0 && prompt.length > room) {
    parts = { ...parts, extra: parts.extra.slice(1) };
    prompt = build(parts);
  }
  if (prompt.length <= room) return { prompt, truncated: true };
  const overhead = build({ ...parts, prefix: '', suffix: '' }).length;
  const count = (t: string) => (t ? tokenize(t).length : 0);
  let available = room - overhead;
  // Joining texts can tokenize a little differently from the parts alone; shrink until it fits.
  for (let attempt = 0; attempt < 8 && available > 0; attempt++) {
    const suffix = keepHead(parts.suffix, Math.min(count(parts.suffix), available >> 2), count);
    const prefix = keepTail(parts.prefix, available - count(suffix), count);
    prompt = build({ ...parts, prefix, suffix });
    if (prompt.length <= room) return { prompt, truncated: true };
    available -= prompt.length - room;
  }
  throw contextExceeded(
    `the fill-in-the-middle prompt does not fit the context of ${engine.nCtx} tokens with ` +
      `${maxTokens} to generate`,
  );
}

/** The longest tail of `text` within `budget` tokens, starting at a line when it can. */
export function keepTail(text: string, budget: number, count: (t: string) => number): string {
  if (budget <= 0) return '';
  if (count(text) <= budget) return text;
  // A token spans at most a few dozen characters: search only the text's last part.
  let lo = Math.max(0, text.length - budget * 64);
  let hi = text.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (count(text.slice(mid)) <= budget) hi = mid;
    else lo = mid + 1;
  }
  let start = lo;
  if (start > 0 && text[start - 1] !== '\n') {
    const nl = text.indexOf('\n', start);
    if (nl >= 0 && nl + 1 < text.length) start = nl + 1;
    else if (isLowSurrogate(text, start)) start++;
  }
  return text.slice(start);
}

/** The longest head of `text` within `budget` tokens, ending after a line when it can. */
export function keepHead(text: string, budget: number, count: (t: string) => number): string {
  if (budget <= 0) return '';
  if (count(text) <= budget) return text;
  let lo = 0;
  let hi = Math.min(text.length, budget * 64);
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if (count(text.slice(0, mid)) <= budget) lo = mid;
    else hi = mid - 1;
  }
  let end = lo;
  const nl = text.lastIndexOf('\n', end - 1);
  if (nl >= 0) end = nl + 1;
  else if (isLowSurrogate(text, end)) end--;
  return text.slice(0, end);
}

function isLowSurrogate(text: string, i: number): boolean {
  const c = text.charCodeAt(i);
  return c >= 0xdc00 && c <= 0xdfff;
}

/** The conversation rendered by the GGUF's chat template (ChatML when it has none). */
export function chatPrompt(
  engine: LoadedEngine,
  messages: readonly ChatMessage[],
): { prompt: number[]; warning?: string } {
  // Message contents are never parsed as control tokens (engine/chat/chat-prompt.ts).
  return chatPromptIds(engine.target, engine.info, messages);
}
