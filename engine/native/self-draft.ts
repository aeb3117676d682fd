// `--draft self` / leapfrog.draftModel = "self": a Q4_0 copy of the target as its own draft
// model (native/src/spec/self_draft.h), for users with one model. Written once into the user
// cache, keyed by the target's path, size and modification time.
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, realpathSync, rmSync, statSync } from 'node:fs';
import { homedir } from 'node:os';
import { basename, join } from 'node:path';
import type { NativeAddon } from './addon';

export const SELF_DRAFT = 'self';

/**
 * The self-draft could not be written (a full disk, a read-only cache): the target alone
 * still works, so callers carry on without a draft and show this as a warning.
 */
export class SelfDraftError extends Error {}

export function cacheDir(): string {
  return (
    process.env.LEAPFROG_CACHE_DIR ??
    join(process.env.XDG_CACHE_HOME ?? join(homedir(), '.cache'), 'leapfrog')
  );
}

/** Where the self-draft of `modelPath` lives (written or not). */
export function selfDraftFile(modelPath: string): string {
  const real = realpathSync(modelPath);
  const st = statSync(real);
  const key = createHash('sha256')
    .update(`${real}\0${st.size}\0${st.mtimeMs}`)
    .digest('hex')
    .slice(0, 16);
  return join(cacheDir(), `${basename(real, '.gguf')}-${key}-self-draft-q4_0.gguf`);
}

/** The self-draft file for `modelPath`, written first if it is not in the cache yet. */
export async function selfDraftPath(addon: NativeAddon, modelPath: string): Promise<string> {
  const path = selfDraftFile(modelPath);
  if (existsSync(path)) return path;
  // The native writer writes `<path>.partial` and renames it into place when complete.
  const partial = `${path}.partial`;
  try {
    mkdirSync(cacheDir(), { recursive: true });
    await addon.writeLowerBitCopy(realpathSync(modelPath), path);
  } catch (e) {
    // A half-written copy on a full disk only takes the space the user needs back.
    rmSync(partial, { force: true });
    const why = e instanceof Error ? e.message : String(e);
    const full = /no space left|ENOSPC|disk quota/i.test(why) ? ' (the disk is full)' : '';
    throw new SelfDraftError(
      `cannot write the self-draft model to ${path}${full}: ${why}; ` +
        'speculation goes on without a draft model (n-gram drafts only)',
    );
  }
  return path;
}
