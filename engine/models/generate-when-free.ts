// Starts a generation, waiting briefly if the session still reports the previous one as
// running. The addon resolves a generation's `done` a moment before it clears the session's
// busy flag (native/src/addon/generation_job.cpp sends Done, then sets busy = false), so the
// next job the scheduler starts right after can be refused with "session is busy". Retrying
// for a short while bridges that gap; any other error is passed on.
import type { GenerateParams, GenerateStats, GenerationHandle, NativeSession } from '../native/addon';

const RETRY_FOR_MS = 2000;

export function generateWhenFree(
  session: NativeSession,
  prompt: number[],
  params: GenerateParams,
  onToken: (id: number, text: string) => void,
): GenerationHandle {
  try {
    return session.generate(prompt, params, onToken);
  } catch (err) {
    if (!isBusy(err)) throw err;
  }
  let inner: GenerationHandle | undefined;
  let aborted = false;
  const done = (async (): Promise<GenerateStats> => {
    const until = Date.now() + RETRY_FOR_MS;
    for (;;) {
      await new Promise((r) => setTimeout(r, 1));
      if (aborted) return abortedBeforeStart(prompt.length);
      try {
        inner = session.generate(prompt, params, onToken);
        return await inner.done;
      } catch (err) {
        if (inner || !isBusy(err) || Date.now() > until) throw err;
      }
    }
  })();
  return {
    done,
    abort: () => {
      aborted = true;
      inner?.abort();
    },
  };
}

function isBusy(err: unknown): boolean {
  return err instanceof Error && /session is busy/.test(err.message);
}

function abortedBeforeStart(promptTokens: number): GenerateStats {
  return {
    promptTokens,
    reusedTokens: 0,
    promptMs: 0,
    decodeMs: 0,
    generated: 0,
    targetPasses: 0,
    drafted: 0,
    accepted: 0,
    draftMs: 0,
    verifyMs: 0,
    aborted: true,
  };
}
