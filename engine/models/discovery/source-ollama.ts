// Ollama's store: manifests/<registry>/<namespace>/<model>/<tag> are JSON manifests whose
// layer of media type `application/vnd.ollama.image.model` names the GGUF, kept as
// blobs/sha256-<hex>. Names follow Ollama's own: `model:tag` on the default registry's
// library, `namespace/model:tag` elsewhere on it, `registry/namespace/model:tag` otherwise.
import { promises as fsp } from 'node:fs';
import { join } from 'node:path';
import {
  OLLAMA_SERVICE_STORE,
  type Candidate,
  type DiscoveryContext,
  type SourceResult,
} from './context';

const MODEL_LAYER = 'application/vnd.ollama.image.model';
const DEFAULT_REGISTRY = 'registry.ollama.ai';
const MAX_MANIFEST_BYTES = 1 << 20;

export function ollamaRoots(ctx: DiscoveryContext): string[] {
  const roots = [
    ctx.env.OLLAMA_MODELS,
    join(ctx.home, '.ollama', 'models'),
    ctx.ollamaServiceStore ?? OLLAMA_SERVICE_STORE,
  ];
  return [...new Set(roots.filter((r): r is string => !!r))];
}

export async function ollamaModels(ctx: DiscoveryContext): Promise<SourceResult> {
  const roots = ollamaRoots(ctx);
  const candidates: Candidate[] = [];
  for (const root of roots) {
    for (const parts of await manifestPaths(join(root, 'manifests'))) {
      candidates.push(await fromManifest(root, parts));
    }
  }
  return { candidates, searched: roots };
}

/** [registry, namespace, model, tag] of every manifest file, four levels down. */
async function manifestPaths(dir: string): Promise<string[][]> {
  let out: string[][] = [[]];
  for (let level = 0; level < 4; level++) {
    const next: string[][] = [];
    for (const parts of out) {
      const entries = await fsp.readdir(join(dir, ...parts), { withFileTypes: true }).catch(() => []);
      for (const e of entries.sort((a, b) => (a.name < b.name ? -1 : 1))) {
        if (e.name.startsWith('.')) continue;
        const wanted = level < 3 ? e.isDirectory() : e.isFile();
        if (wanted) next.push([...parts, e.name]);
      }
    }
    out = next;
  }
  return out;
}

function ollamaName([registry, namespace, model, tag]: string[]): string {
  if (registry === DEFAULT_REGISTRY && namespace === 'library') return `${model}:${tag}`;
  if (registry === DEFAULT_REGISTRY) return `${namespace}/${model}:${tag}`;
  return `${registry}/${namespace}/${model}:${tag}`;
}

async function fromManifest(root: string, parts: string[]): Promise<Candidate> {
  const name = ollamaName(parts);
  const manifest = join(root, 'manifests', ...parts);
  const broken = (reason: string): Candidate => ({
    source: 'ollama',
    name,
    path: manifest,
    reason,
  });
  let layers: unknown;
  try {
    const st = await fsp.stat(manifest);
    if (st.size > MAX_MANIFEST_BYTES) return broken(`manifest is ${st.size} bytes, not a manifest`);
    layers = (JSON.parse(await fsp.readFile(manifest, 'utf8')) as { layers?: unknown }).layers;
  } catch (err) {
    return broken(`unreadable manifest (${err instanceof Error ? err.message : String(err)})`);
  }
  if (!Array.isArray(layers)) return broken('manifest has no layers');
  const layer = layers.find(
    (l): l is { digest: unknown } =>
      typeof l === 'object' && l !== null && (l as { mediaType?: unknown }).mediaType === MODEL_LAYER,
  );
  if (!layer) return broken('manifest has no model layer');
  // The digest becomes a file name: only the exact form, so no manifest can point elsewhere.
  const digest = typeof layer.digest === 'string' ? /^sha256[:-]([0-9a-f]{64})$/.exec(layer.digest) : null;
  if (!digest) return broken('manifest has a malformed model digest');
  return { source: 'ollama', name, path: join(root, 'blobs', `sha256-${digest[1]}`) };
}
