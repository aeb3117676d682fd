// What the user typed into "Download Model…", as a URL to fetch: a URL as it is (a Hugging
// Face page URL `…/blob/<rev>/<file>` becomes the file's `…/resolve/<rev>/<file>`), or a
// Hugging Face repository `org/repo` whose file is asked for next, or `org/repo/file.gguf`.
export type ModelSource =
  | { kind: 'url'; url: string }
  | { kind: 'hf-repo'; repo: string }
  | { kind: 'invalid'; why: string };

const REPO = /^[A-Za-z0-9][\w.-]*\/[A-Za-z0-9][\w.-]*$/;

export function parseModelSource(input: string): ModelSource {
  const text = input.trim();
  if (!text) return { kind: 'invalid', why: 'type a URL or a Hugging Face repository' };
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(text)) {
    let url: URL;
    try {
      url = new URL(text);
    } catch {
      return { kind: 'invalid', why: 'not a valid URL' };
    }
    if (url.protocol !== 'https:' && url.protocol !== 'http:') {
      return { kind: 'invalid', why: 'only http and https URLs can be downloaded' };
    }
    if (url.hostname === 'huggingface.co') {
      const page = /^\/([^/]+\/[^/]+)\/blob\/([^/]+)\/(.+)$/.exec(url.pathname);
      if (page)
        return {
          kind: 'url',
          url: `https://huggingface.co/${page[1]}/resolve/${page[2]}/${page[3]}`,
        };
      const repo = /^\/([^/]+\/[^/]+)\/?$/.exec(url.pathname);
      if (repo && REPO.test(repo[1])) return { kind: 'hf-repo', repo: repo[1] };
    }
    return { kind: 'url', url: url.href };
  }
  const parts = text.split('/');
  if (parts.length >= 3 && REPO.test(parts.slice(0, 2).join('/'))) {
    return {
      kind: 'url',
      url: huggingFaceFileUrl(parts.slice(0, 2).join('/'), parts.slice(2).join('/')),
    };
  }
  if (REPO.test(text)) return { kind: 'hf-repo', repo: text };
  return { kind: 'invalid', why: 'not a URL, nor a Hugging Face repository (org/repo)' };
}

/** Why a file name in a repository cannot be downloaded, or undefined when it can. */
export function checkRepoFile(file: string): string | undefined {
  const f = file.trim();
  if (!f) return 'type the file name, e.g. model-q4_k_m.gguf';
  if (f.startsWith('/') || f.split('/').some((s) => s === '..' || s === '')) {
    return 'a path inside the repository, without leading / or ..';
  }
  if (!/\.gguf$/i.test(f)) return 'a GGUF file (ending in .gguf)';
  return undefined;
}

/** The download URL of a file in a Hugging Face repository. */
export function huggingFaceFileUrl(repo: string, file: string, revision = 'main'): string {
  const path = file.trim().split('/').map(encodeURIComponent).join('/');
  return `https://huggingface.co/${repo}/resolve/${encodeURIComponent(revision)}/${path}`;
}

/** Why an optional sha256 is not one, or undefined (empty is fine: none). */
export function checkSha256Input(sha: string): string | undefined {
  const s = sha.trim().replace(/^sha256:/i, '');
  if (s === '' || /^[0-9a-fA-F]{64}$/.test(s)) return undefined;
  return 'a sha256 is 64 hexadecimal digits (or leave it empty)';
}

/** 1.2 GB, 340 MB, 12 kB: sizes as a progress message shows them. */
export function formatBytes(n: number): string {
  const units = ['bytes', 'kB', 'MB', 'GB', 'TB'];
  let v = n;
  let u = 0;
  while (v >= 1000 && u < units.length - 1) {
    v /= 1000;
    u++;
  }
  return u === 0 ? `${n} bytes` : `${v >= 100 ? v.toFixed(0) : v.toFixed(1)} ${units[u]}`;
}
