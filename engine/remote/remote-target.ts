// A completion target on an endpoint: the completion service builds the same context
// window, ring chunks and indentation healing as for the local model and runs the same stop
// rules and post-processing on the text that streams back; only the request differs. No
// tokenizer of the server's model is at hand, so token budgets are estimated from length.
import type { CompletionTarget } from '../completion/completion-service';
import type { RemoteEndpoint } from './endpoint';
import { REMOTE_SPECIAL_TEXTS } from './special-texts';

/** Code runs 3–4 characters a token; counting 3 keeps the prompt inside its budget. */
export function estimateTokens(text: string): number {
  return Math.ceil(text.length / 3);
}

/** The endpoint as a completion target, or undefined while it is down. */
export async function remoteCompletionTarget(
  endpoint: RemoteEndpoint,
): Promise<CompletionTarget | undefined> {
  const info = await endpoint.ready();
  if (!info) return undefined;
  return {
    nCtx: info.contextSize,
    countTokens: estimateTokens,
    // Only /infill takes other files (input_extra); the /v1 forms get this file alone.
    extraChunks: info.completion === 'infill',
    specialTexts: REMOTE_SPECIAL_TEXTS,
    prepare: (parts, params, _ringChunks, singleLine) => {
      const prompt = { prefix: parts.prefix, suffix: parts.suffix, extra: parts.extra };
      const s = params.sampling;
      const sampling = {
        maxTokens: params.maxTokens,
        temperature: s.temperature,
        topK: s.topK,
        topP: s.topP,
        seed: s.seed,
        // The server can end a single-line completion itself; the stop rules would anyway.
        stop: singleLine ? ['\n'] : [],
      };
      return (onPiece) => endpoint.complete(prompt, sampling, onPiece);
    },
  };
}
