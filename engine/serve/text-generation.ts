// One request's generation as text: a pool job on the native session's generate path (the
// same one the sidecar uses), with stop strings cut exactly — text that may begin a stop
// string is held back until the next piece decides, so no part of a stop string is ever
// sent — and with the reason it ended, as OpenAI and llama.cpp report it.
import type { GenerateParams, GenerateStats, GenerationHandle } from '../native/addon';
import { StopStrings } from '../generation/stop-strings';
import type { SessionPool } from './session-pool';

export interface TextRequest {
  prompt: number[];
  params: GenerateParams;
  /** Strings that end the text (not included in it). */
  stop: readonly string[];
  /** The session's context: a generation that fills it ended for length. */
  nCtx: number;
  /** Called with each piece of text as it becomes final (streaming). */
  onText?: (delta: string) => void;
  /** End at the first newline after this many ms since the first token (llama.cpp's). */
  maxPredictMs?: number;
}

export type FinishReason = 'stop' | 'length';

export interface TextResult {
  text: string;
  /** Token ids produced up to the end of the text (stop strings and EOG not counted). */
  tokens: number[];
  finishReason: FinishReason;
  /** How it stopped, in llama.cpp's terms. */
  stoppedBy: 'eos' | 'word' | 'limit';
  stoppingWord: string;
  stats: GenerateStats;
}

export type TextOutcome =
  | { status: 'finished'; result: TextResult }
  | { status: 'cancelled'; queued: boolean; generated: number }
  | { status: 'failed'; error: Error };

export interface TextCall {
  outcome: Promise<TextOutcome>;
  cancel(): void;
}

export function generateText(pool: SessionPool, req: TextRequest): TextCall {
  let text = '';
  const tokens: number[] = [];
  let stoppingWord = '';
  let timeLimited = false;
  let filter = new StopStrings(req.stop);
  const ticket = pool.submit({
    prompt: req.prompt,
    start: (session): GenerationHandle => {
      filter = new StopStrings(req.stop);
      let stopped = false;
      let firstTokenAt = 0;
      const emit = (delta: string) => {
        if (!delta) return;
        text += delta;
        req.onText?.(delta);
      };
      const handle: GenerationHandle = session.generate(req.prompt, req.params, (id, piece) => {
        if (stopped) return; // tokens already in flight when the engine was asked to stop
        if (id >= 0) tokens.push(id); // -1: the detokenizer's flushed tail
        const out = filter.push(piece);
        emit(out.emit);
        if (out.stopped) {
          stoppingWord = filter.stoppedAt;
          stopped = true;
        } else if (req.maxPredictMs !== undefined) {
          const now = Date.now();
          if (!firstTokenAt) firstTokenAt = now;
          if (now - firstTokenAt > req.maxPredictMs && text.includes('\n')) {
            timeLimited = stopped = true;
          }
        }
        if (stopped) handle?.abort();
      });
      if (stopped) handle.abort(); // stopped by a piece delivered before generate() returned
      return handle;
    },
  });
  const outcome = ticket.outcome.then((o): TextOutcome => {
    if (o.status === 'failed') return o;
    if (o.status === 'cancelled') {
      return { status: 'cancelled', queued: o.queued, generated: tokens.length };
    }
    if (!stoppingWord) {
      const tail = filter.flush();
      if (tail) {
        text += tail;
        req.onText?.(tail);
      }
    }
    const full =
      timeLimited ||
      tokens.length >= req.params.maxTokens ||
      req.prompt.length + tokens.length >= req.nCtx - 2;
    const stoppedBy = stoppingWord ? 'word' : full ? 'limit' : 'eos';
    return {
      status: 'finished',
      result: {
        text,
        tokens,
        finishReason: stoppedBy === 'limit' ? 'length' : 'stop',
        stoppedBy,
        stoppingWord,
        stats: o.stats,
      },
    };
  });
  return { outcome, cancel: ticket.cancel };
}
