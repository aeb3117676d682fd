// The lookup drafter's corpus: the extra-context chunks of other open files as token ids,
// in ring order, separated by -1 (GenerateParams.corpus). A drafter that finds the tokens
// just generated in a test file that repeats the current file's identifiers proposes what
// followed them there.
import type { ExtraChunk } from './fim-template';

export function lookupCorpus(
  chunks: readonly ExtraChunk[],
  tokenize: (text: string) => number[],
): number[] {
  const out: number[] = [];
  for (const c of chunks) {
    const ids = tokenize(c.text);
    if (ids.length === 0) continue;
    if (out.length > 0) out.push(-1);
    out.push(...ids);
  }
  return out;
}
