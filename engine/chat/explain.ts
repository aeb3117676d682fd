// "Explain selection" is an ordinary chat turn whose message carries the selected code with
// its file name and language, so it streams, cancels and keeps history like any chat.
import type { ExplainParams } from '../protocol';

export const DEFAULT_SYSTEM_PROMPT =
  'You are Leapfrog, a concise coding assistant running locally in the editor. ' +
  'Answer in Markdown; put code in fenced blocks.';

export function explainMessage(
  p: Pick<ExplainParams, 'selection' | 'fileName' | 'languageId' | 'question'>,
): string {
  const fence = p.selection.includes('```') ? '~~~~' : '```';
  const question =
    p.question?.trim() ||
    'Explain what this code does, step by step, and point out anything surprising.';
  return (
    `This is a selection from \`${p.fileName}\` (${p.languageId}):\n\n` +
    `${fence}${p.languageId}\n${p.selection}\n${fence}\n\n${question}`
  );
}
