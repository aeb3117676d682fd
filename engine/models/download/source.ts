// Checks what a download request names before anything touches the network or the disk:
// the URL (http or https only), the file name (one plain name inside the model folder, never
// a path that climbs out of it) and the expected sha256 (64 hex digits).
import { DownloadError } from './errors';

export function checkUrl(url: string): URL {
  let parsed: URL;
  try {
    parsed = new URL(url.trim());
  } catch {
    throw new DownloadError(`not a URL: ${JSON.stringify(url)}`, 'bad-input');
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') {
    throw new DownloadError(`only http and https URLs can be downloaded, not ${url}`, 'bad-input');
  }
  return parsed;
}

/** The name the file gets: the one asked for, else the URL's last path segment (+ .gguf). */
export function downloadFileName(url: URL, asked?: string): string {
  if (asked !== undefined && asked.trim() !== '') return checkFileName(asked.trim());
  const segments = url.pathname.split('/').filter((s) => s !== '');
  let name: string;
  try {
    name = decodeURIComponent(segments.at(-1) ?? '');
  } catch {
    name = segments.at(-1) ?? '';
  }
  if (!name) throw new DownloadError(`the URL names no file: ${url.href}`, 'bad-input');
  if (!/\.gguf$/i.test(name)) name += '.gguf';
  return checkFileName(name);
}

function checkFileName(name: string): string {
  // Windows' separator too: a name is never a path, on any platform the folder is on.
  if (/[/\\\0]/.test(name) || name === '.' || name === '..' || name.startsWith('.')) {
    throw new DownloadError(`not a plain file name: ${JSON.stringify(name)}`, 'bad-input');
  }
  if (name.endsWith('.part')) {
    throw new DownloadError(`a model file cannot be named *.part: ${name}`, 'bad-input');
  }
  return name;
}

/** A sha256 as lowercase hex; undefined when none was given. */
export function checkSha256(sha: string | undefined): string | undefined {
  if (sha === undefined || sha.trim() === '') return undefined;
  const hex = sha.trim().toLowerCase().replace(/^sha256:/, '');
  if (!/^[0-9a-f]{64}$/.test(hex)) {
    throw new DownloadError(`not a sha256 (64 hex digits): ${JSON.stringify(sha)}`, 'bad-input');
  }
  return hex;
}
