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
    // Not push(...ids): a chunk of a file with a 1 MB line is ~10^5 tokens, past the
    // argument limit of a call (RangeError: Maximum call stack size exceeded).
    for (const id of ids) out.push(id);
  }
  return out;
}
