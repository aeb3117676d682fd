// Fill-in-the-middle prompt templates, recognised from the model's special tokens. The
// prompt is built as token ids (special tokens by id, user text tokenized with special-token
// parsing off), so code that happens to contain `<|fim_prefix|>` cannot break the prompt.
// Every supported family uses prefix-suffix-middle order; they differ in the token texts,
// and in whether extra files can be given in a repository-level form.
import type { ModelInfo } from '../native/addon';

export type FimFamily = 'qwen' | 'starcoder' | 'codellama' | 'deepseek' | 'generic' | 'none';

export interface FimTemplate {
  family: FimFamily;
  prefixId: number;
  suffixId: number;
  middleId: number;
  /** Repository-level form: `<repo_name>` and `<file_sep>` ids, or -1. */
  repoId: number;
  fileSepId: number;
  bosId: number; // -1 unless the model wants BOS added
  /** Texts of every special token that must never appear in ghost text. */
  specialTexts: string[];
  /** Ids that end a completion at once (FIM markers, file separators, end of generation). */
  stopIds: number[];
}

export interface ExtraChunk {
  path: string;
  text: string;
}

export interface FimParts {
  repoName: string;
  filePath: string;
  prefix: string;
  suffix: string;
  extra: ExtraChunk[];
}

/** Token texts of well-known families; `tokenText(id)` renders a special token's text. */
export function detectFimTemplate(info: ModelInfo, tokenText: (id: number) => string): FimTemplate {
  const { fim } = info;
  const text = (id: number) => (id >= 0 ? tokenText(id) : '');
  const prefixText = text(fim.prefix).trim();
  const hasFim = fim.prefix >= 0 && fim.suffix >= 0 && fim.middle >= 0;
  let family: FimFamily = 'none';
  if (hasFim) {
    if (prefixText === '<|fim_prefix|>') family = 'qwen';
    else if (prefixText === '<fim_prefix>' || prefixText === '<fim-prefix>') family = 'starcoder';
    else if (/^▁?<PRE>$/.test(prefixText)) family = 'codellama';
    else if (prefixText === '<｜fim▁begin｜>') family = 'deepseek';
    else family = 'generic';
  }
  const repoForm = family === 'qwen' || family === 'starcoder';
  const ids = [fim.prefix, fim.suffix, fim.middle, fim.pad, fim.repo, fim.fileSep, info.eos];
  const stopIds = unique([...ids, ...info.eogIds].filter((id) => id >= 0));
  const specialTexts = unique(
    stopIds.map((id) => text(id).trim()).filter((t) => t.length > 1 && /[<>|｜]/.test(t)),
  );
  return {
    family,
    prefixId: hasFim ? fim.prefix : -1,
    suffixId: hasFim ? fim.suffix : -1,
    middleId: hasFim ? fim.middle : -1,
    repoId: repoForm ? fim.repo : -1,
    fileSepId: repoForm ? fim.fileSep : -1,
    bosId: info.addBos && info.bos >= 0 ? info.bos : -1,
    specialTexts,
    stopIds,
  };
}

/** A prompt piece: a special token id, or text to tokenize without parsing specials. */
type Piece = number | string;

/**
 * The prompt pieces in order. Stable parts come first (repository name, extra chunks, the
 * file's name) so that the KV cache of the previous request covers as much as possible.
 */
export function fimPieces(t: FimTemplate, parts: FimParts): Piece[] {
  const pieces: Piece[] = [];
  if (t.bosId >= 0) pieces.push(t.bosId);
  if (t.family === 'none') {
    // No FIM tokens: plain continuation of the prefix (the suffix cannot be shown to it).
    pieces.push(parts.prefix);
    return pieces;
  }
  const repoForm = t.fileSepId >= 0;
  if (repoForm && t.family === 'qwen') {
    // <|repo_name|>name\n<|file_sep|>path\ncontent\n ... <|file_sep|>path\n<|fim_prefix|>...
    if (t.repoId >= 0) pieces.push(t.repoId, `${parts.repoName}\n`);
    for (const c of parts.extra) pieces.push(t.fileSepId, `${c.path}\n${withNewline(c.text)}`);
    pieces.push(t.fileSepId, `${parts.filePath}\n`);
    pieces.push(t.prefixId, parts.prefix, t.suffixId, parts.suffix, t.middleId);
    return pieces;
  }
  if (repoForm && t.family === 'starcoder') {
    // StarCoder2: <repo_name>name<file_sep>path\ncontent<file_sep><fim_prefix>path\npre...
    if (t.repoId >= 0) pieces.push(t.repoId, parts.repoName);
    for (const c of parts.extra) pieces.push(t.fileSepId, `${c.path}\n${withNewline(c.text)}`);
    pieces.push(t.fileSepId, t.prefixId, `${parts.filePath}\n${parts.prefix}`);
    pieces.push(t.suffixId, parts.suffix, t.middleId);
    return pieces;
  }
  // CodeLlama, DeepSeek-Coder, StarCoder 1 and unknown families: the file alone.
  pieces.push(t.prefixId, parts.prefix, t.suffixId, parts.suffix, t.middleId);
  return pieces;
}

/** Tokenizes the pieces into one prompt; adjacent texts are joined before tokenizing. */
export function buildFimPrompt(
  t: FimTemplate,
  parts: FimParts,
  tokenize: (text: string) => number[],
): number[] {
  const ids: number[] = [];
  let text = '';
  const flush = () => {
    if (text) ids.push(...tokenize(text));
    text = '';
  };
  for (const p of fimPieces(t, parts)) {
    if (typeof p === 'number') {
      flush();
      ids.push(p);
    } else {
      text += p;
    }
  }
  flush();
  return ids;
}

/** Whether extra chunks from other files reach the prompt for this template. */
export function usesExtraChunks(t: FimTemplate): boolean {
  return t.fileSepId >= 0 && (t.family === 'qwen' || t.family === 'starcoder');
}

function withNewline(s: string): string {
  return s.endsWith('\n') ? s : `${s}\n`;
}

function unique<T>(xs: T[]): T[] {
  return [...new Set(xs)];
}

/**
 * The same template with fill-in-the-middle turned off: plain continuation of the prefix
 * (the suffix still steers post-processing). For models whose FIM tokens exist but were not
 * learned — the bundled model's card reports 0 % FIM exact match while its left-to-right
 * completions are plausible — so its prompts are prefix-only.
 */
export function withoutFim(t: FimTemplate): FimTemplate {
  return {
    ...t,
    family: 'none',
    prefixId: -1,
    suffixId: -1,
    middleId: -1,
    repoId: -1,
    fileSepId: -1,
  };
}
