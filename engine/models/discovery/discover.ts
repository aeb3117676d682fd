// Model discovery: every source's candidates, the same file reached twice listed once (by
// its real path), each file described from its header (a few at a time), drafts paired
// with targets. Read-only and never throws: what cannot be read is listed with the reason.
import { promises as fsp } from 'node:fs';
import { MODEL_SOURCES, type DiscoveredModel, type ModelsResult } from '../../protocol';
import type { Candidate, DiscoveryContext, SourceResult } from './context';
import { describeModelFile, unreadableFacts, type ModelFacts } from './model-facts';
import { pairDrafts } from './pairing';
import { folderModels } from './source-folders';
import { huggingFaceModels } from './source-huggingface';
import { llamaCppModels } from './source-llama-cpp';
import { lmStudioModels } from './source-lmstudio';
import { ollamaModels } from './source-ollama';

/** Headers read at once: enough to overlap I/O, few enough for a 2-core laptop. */
const CONCURRENCY = 4;

const SOURCES: ((ctx: DiscoveryContext) => Promise<SourceResult>)[] = [
  ollamaModels,
  lmStudioModels,
  huggingFaceModels,
  llamaCppModels,
  folderModels,
];

export async function discoverModels(ctx: DiscoveryContext): Promise<ModelsResult> {
  const searched: string[] = [];
  const candidates: Candidate[] = [];
  for (const source of SOURCES) {
    const found = await source(ctx).catch(() => ({ candidates: [], searched: [] }));
    candidates.push(...found.candidates);
    searched.push(...found.searched);
  }
  const models = await describeAll(await withoutDuplicates(candidates));
  models.sort(
    (a, b) =>
      MODEL_SOURCES.indexOf(a.source) - MODEL_SOURCES.indexOf(b.source) ||
      a.name.localeCompare(b.name) ||
      a.path.localeCompare(b.path),
  );
  const pairs = pairDrafts(models);
  return { models, pairs, searched };
}

interface Located {
  candidate: Candidate;
  bytes: number;
  alsoAs: Candidate[];
}

/** One entry per real file, the first source to reach it keeping it (the rest: alsoAs). */
async function withoutDuplicates(candidates: Candidate[]): Promise<Located[]> {
  const byRealPath = new Map<string, Located>();
  const unique: Located[] = [];
  for (const candidate of candidates) {
    if (candidate.reason) {
      unique.push({ candidate, bytes: 0, alsoAs: [] });
      continue;
    }
    const st = await fsp.stat(candidate.path).catch((e: NodeJS.ErrnoException) => e);
    if (st instanceof Error) {
      const reason =
        st.code === 'ENOENT' ? 'file not found (a broken link or a missing blob)' : st.message;
      unique.push({ candidate: { ...candidate, reason }, bytes: 0, alsoAs: [] });
      continue;
    }
    if (!st.isFile()) {
      unique.push({ candidate: { ...candidate, reason: 'not a regular file' }, bytes: 0, alsoAs: [] });
      continue;
    }
    const real = await fsp.realpath(candidate.path).catch(() => candidate.path);
    const seen = byRealPath.get(real);
    if (seen) {
      seen.alsoAs.push(candidate);
      continue;
    }
    const located = { candidate, bytes: st.size, alsoAs: [] };
    byRealPath.set(real, located);
    unique.push(located);
  }
  return unique;
}

async function describeAll(files: Located[]): Promise<DiscoveredModel[]> {
  const out: DiscoveredModel[] = new Array(files.length);
  let next = 0;
  async function worker(): Promise<void> {
    while (next < files.length) {
      const i = next++;
      out[i] = await describe(files[i]);
    }
  }
  await Promise.all(Array.from({ length: Math.min(CONCURRENCY, files.length) }, worker));
  return out;
}

async function describe({ candidate, bytes, alsoAs }: Located): Promise<DiscoveredModel> {
  const facts: ModelFacts = candidate.reason
    ? unreadableFacts(candidate.reason)
    : await describeModelFile(candidate.path);
  const model: DiscoveredModel = {
    source: candidate.source,
    name: candidate.name,
    path: candidate.path,
    bytes,
    ...facts,
  };
  if (alsoAs.length > 0) {
    model.alsoAs = alsoAs.map((c) => ({ source: c.source, name: c.name, path: c.path }));
  }
  return model;
}
