// Whether this machine has an engine build, asked before the sidecar is started: the
// platform packages (scripts/package.mjs) carry one addon each, in
// dist/native/<platform>-<arch>/, and the repository's build is native/build/ — the places
// engine/native/load-addon.ts looks (the extension may not import it, so they are repeated
// here). Where there is none (macOS today, Windows, an unexpected platform) the extension
// still runs and offers a team's server (`leapfrog.endpoint`), with which the sidecar never
// loads the addon. No vscode import: a unit test runs it.
import { existsSync } from 'node:fs';
import { join } from 'node:path';

/** The targets `npm run package` makes; the message names them. */
export const PACKAGED_TARGETS = ['linux-x64', 'linux-arm64'];

/** The notification's button that opens the `leapfrog.endpoint` setting. */
export const USE_ENDPOINT_ACTION = 'Use a Team Server…';

const PLATFORM_NAMES: Record<string, string> = {
  darwin: 'macOS',
  win32: 'Windows',
  linux: 'Linux',
};

/** Every place the sidecar may find the addon, in its order. */
export function addonCandidates(
  extensionRoot: string,
  platform: string = process.platform,
  arch: string = process.arch,
): string[] {
  if (process.env.LEAPFROG_ADDON) return [process.env.LEAPFROG_ADDON];
  return [
    join(extensionRoot, 'native', 'build', 'leapfrog_native.node'),
    join(extensionRoot, 'dist', 'native', `${platform}-${arch}`, 'leapfrog_native.node'),
  ];
}

/** Why there is no engine build here (one sentence for the user), or undefined if there is. */
export function missingEngine(
  extensionRoot: string,
  platform: string = process.platform,
  arch: string = process.arch,
): string | undefined {
  if (addonCandidates(extensionRoot, platform, arch).some((p) => existsSync(p))) return undefined;
  const target = `${platform}-${arch}`;
  const where = `${PLATFORM_NAMES[platform] ?? platform} ${arch}`;
  const why = PACKAGED_TARGETS.includes(target)
    ? `its file is missing from this installation (${addonCandidates(extensionRoot, platform, arch).join(', ')})`
    : `Leapfrog's engine is built for ${PACKAGED_TARGETS.join(' and ')} only`;
  return `no engine build for ${where} (${target}): ${why}. Completions and chat can use a team's server instead: set leapfrog.endpoint.`;
}

/** Whether the sidecar's error is the addon's (absent or failing to load: dlopen's reason). */
export function isEngineFailure(message: string | undefined): boolean {
  return !!message && /^native addon (not found|failed to load)/.test(message);
}
