// `--draft self` / leapfrog.draftModel = "self": a Q4_0 copy of the target as its own draft
// model (native/src/spec/self_draft.h), for users with one model. Written once into the user
// cache, keyed by the target's path, size and modification time.
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, realpathSync, statSync } from 'node:fs';
import { homedir } from 'node:os';
import { basename, join } from 'node:path';
import type { NativeAddon } from './addon';

export const SELF_DRAFT = 'self';

export function cacheDir(): string {
  return (
    process.env.LEAPFROG_CACHE_DIR ??
    join(process.env.XDG_CACHE_HOME ?? join(homedir(), '.cache'), 'leapfrog')
  );
}

/** The self-draft file for `modelPath`, written first if it is not in the cache yet. */
export async function selfDraftPath(addon: NativeAddon, modelPath: string): Promise<string> {
  const real = realpathSync(modelPath);
  const st = statSync(real);
  const key = createHash('sha256')
    .update(`${real}\0${st.size}\0${st.mtimeMs}`)
    .digest('hex')
    .slice(0, 16);
  const dir = cacheDir();
  const path = join(dir, `${basename(real, '.gguf')}-${key}-self-draft-q4_0.gguf`);
  if (!existsSync(path)) {
    mkdirSync(dir, { recursive: true });
    await addon.writeLowerBitCopy(real, path);
  }
  return path;
}
