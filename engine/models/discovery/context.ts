// Where discovery looks, as one value: the home folder, the environment and the platform
// (so a test can point every source at a folder it wrote), and the folders the user added.
import { homedir } from 'node:os';
import type { ModelSource } from '../../protocol';

export interface DiscoveryContext {
  home: string;
  env: NodeJS.ProcessEnv;
  platform: NodeJS.Platform;
  /** Extra folders to search (`--folder`, the `leapfrog.modelFolders` setting). */
  folders: string[];
  /** Where Ollama's Linux service keeps its models (outside any home folder). */
  ollamaServiceStore?: string;
}

export const OLLAMA_SERVICE_STORE = '/usr/share/ollama/.ollama/models';

export function discoveryContext(folders: string[] = []): DiscoveryContext {
  // os.homedir() follows $HOME, so tests (and users) can move it.
  return { home: homedir(), env: process.env, platform: process.platform, folders };
}

/** A file a source found, before its header is read. */
export interface Candidate {
  source: ModelSource;
  name: string;
  path: string;
  /** Set when the source already knows the file is unusable (a broken Ollama manifest). */
  reason?: string;
}

/** What one source reports: its candidates and the folders it looked in. */
export interface SourceResult {
  candidates: Candidate[];
  searched: string[];
}

/** `$XDG_CACHE_HOME`, else ~/.cache: where Linux tools keep caches. */
export function cacheHome(ctx: DiscoveryContext): string {
  const xdg = ctx.env.XDG_CACHE_HOME;
  return xdg && xdg.startsWith('/') ? xdg : `${ctx.home}/.cache`;
}
