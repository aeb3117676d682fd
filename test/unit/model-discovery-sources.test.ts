// Each place discovery looks, as the tools that fill it leave it (folder layouts written here
// into a temporary home): Ollama's manifests and blobs, LM Studio's publisher/repo folders,
// the Hugging Face cache's snapshot links into blobs, llama.cpp's cache, added folders; the
// environment variables that move them; what is skipped (later shards, mmproj, hidden
// folders); the same file reached twice; and that nothing is ever written.
import { strict as assert } from 'node:assert';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { DiscoveredModel } from '../../engine/protocol';
import type { DiscoveryContext } from '../../engine/models/discovery/context';
import { discoverModels } from '../../engine/models/discovery/discover';
import { u32 } from '../fixtures/gguf-writer';
import {
  PLAIN_TOKENS,
  snapshotTree,
  tinyGguf,
  writeFile,
  writeHfFile,
  writeOllamaModel,
} from './model-discovery-fixtures';

const target = tinyGguf({ hidden: 128 }).bytes;
const draft = tinyGguf({ hidden: 16, layers: 1 }).bytes;
const other = tinyGguf({ tokens: PLAIN_TOKENS, tokenizer: 'llama', arch: 'llama' }).bytes;

describe('model discovery: where models are found', () => {
  let home: string;
  beforeEach(() => {
    home = mkdtempSync(join(tmpdir(), 'leapfrog-discovery-home-'));
  });
  afterEach(() => rmSync(home, { recursive: true, force: true }));

  const ctx = (env: NodeJS.ProcessEnv = {}, folders: string[] = []): DiscoveryContext => ({
    home,
    env,
    platform: 'linux',
    folders,
    ollamaServiceStore: join(home, 'usr-share-ollama'),
  });
  const brief = (m: DiscoveredModel) => ({ source: m.source, name: m.name, path: m.path });

  it('finds nothing in an empty home, and says where it looked', async () => {
    const r = await discoverModels(ctx());
    assert.deepEqual(r.models, []);
    assert.deepEqual(r.pairs, []);
    assert.deepEqual(r.searched, [
      join(home, '.ollama', 'models'),
      join(home, 'usr-share-ollama'),
      join(home, '.lmstudio', 'models'),
      join(home, '.cache', 'lm-studio', 'models'),
      join(home, '.cache', 'huggingface', 'hub'),
      join(home, '.cache', 'llama.cpp'),
    ]);
  });

  it('Ollama: manifest → model layer → blob, named model:tag; tags of one blob listed once', async () => {
    const store = join(home, '.ollama', 'models');
    const blob = writeOllamaModel(store, ['registry.ollama.ai', 'library', 'tiny', '7b'], target);
    writeOllamaModel(store, ['registry.ollama.ai', 'library', 'tiny', 'latest'], target);
    const userBlob = writeOllamaModel(
      store,
      ['registry.ollama.ai', 'someone', 'small', 'q8'],
      draft,
    );
    const hfBlob = writeOllamaModel(store, ['hf.co', 'org', 'Other-GGUF', 'Q4_K_M'], other);
    writeFile(join(store, 'manifests', 'registry.ollama.ai', 'library', 'broken', 'latest'), '{');
    writeFile(
      join(store, 'manifests', 'registry.ollama.ai', 'library', 'nomodel', 'latest'),
      JSON.stringify({ layers: [{ mediaType: 'application/vnd.ollama.image.license' }] }),
    );
    writeFile(
      join(store, 'manifests', 'registry.ollama.ai', 'library', 'escape', 'latest'),
      JSON.stringify({
        layers: [{ mediaType: 'application/vnd.ollama.image.model', digest: 'sha256:../../x' }],
      }),
    );
    const r = await discoverModels(ctx());
    const byName = new Map(r.models.map((m) => [m.name, m]));
    assert.deepEqual(
      r.models.map(brief).filter((m) => m.path.includes('blobs')),
      [
        { source: 'ollama', name: 'hf.co/org/Other-GGUF:Q4_K_M', path: hfBlob },
        { source: 'ollama', name: 'someone/small:q8', path: userBlob },
        { source: 'ollama', name: 'tiny:7b', path: blob },
      ],
    );
    assert.deepEqual(byName.get('tiny:7b')!.alsoAs, [
      { source: 'ollama', name: 'tiny:latest', path: blob },
    ]);
    assert.equal(byName.get('tiny:7b')!.supported, true);
    assert.equal(byName.get('tiny:7b')!.bytes, target.length);
    assert.match(byName.get('broken:latest')!.reason!, /unreadable manifest/);
    assert.equal(byName.get('nomodel:latest')!.reason, 'manifest has no model layer');
    assert.equal(byName.get('escape:latest')!.reason, 'manifest has a malformed model digest');
  });

  it('Ollama: OLLAMA_MODELS is searched too, and a missing blob is listed with the reason', async () => {
    const moved = join(home, 'elsewhere');
    const blob = writeOllamaModel(
      moved,
      ['registry.ollama.ai', 'library', 'gone', 'latest'],
      draft,
    );
    rmSync(blob);
    const r = await discoverModels(ctx({ OLLAMA_MODELS: moved }));
    assert.equal(r.searched[0], moved);
    assert.deepEqual(r.models.map(brief), [{ source: 'ollama', name: 'gone:latest', path: blob }]);
    assert.match(r.models[0].reason!, /file not found/);
    assert.equal(r.models[0].supported, false);
  });

  it('LM Studio: publisher/repo/file, in both of its folders; no mmproj, no later shards', async () => {
    const a = join(home, '.lmstudio', 'models', 'pub', 'Tiny-GGUF');
    const b = join(home, '.cache', 'lm-studio', 'models', 'old', 'Repo-GGUF');
    writeFile(join(a, 'tiny-Q8_0.gguf'), target);
    writeFile(join(a, 'mmproj-tiny-f16.gguf'), draft);
    const split = tinyGguf({ meta: [['split.count', u32(2)]] }).bytes;
    writeFile(join(a, 'big-00001-of-00002.gguf'), split);
    writeFile(join(a, 'big-00002-of-00002.gguf'), split);
    writeFile(join(a, 'notes.txt'), 'not a model');
    writeFile(join(a, 'tiny-Q8_0.gguf.part'), 'an unfinished download');
    writeFile(join(b, 'draft.GGUF'), draft);
    const r = await discoverModels(ctx());
    assert.deepEqual(r.models.map(brief), [
      { source: 'lmstudio', name: 'old/Repo-GGUF/draft', path: join(b, 'draft.GGUF') },
      {
        source: 'lmstudio',
        name: 'pub/Tiny-GGUF/big-00001-of-00002',
        path: join(a, 'big-00001-of-00002.gguf'),
      },
      { source: 'lmstudio', name: 'pub/Tiny-GGUF/tiny-Q8_0', path: join(a, 'tiny-Q8_0.gguf') },
    ]);
    assert.match(r.models[1].reason!, /split into 2 files/);
  });

  it('Hugging Face: snapshot links reported with the blob size; one blob in two revisions once', async () => {
    const hub = join(home, '.cache', 'huggingface', 'hub');
    const link = writeHfFile(hub, 'org/Tiny-GGUF', 'aaaa1111', 'tiny-q8_0.gguf', target);
    const again = writeHfFile(hub, 'org/Tiny-GGUF', 'bbbb2222', 'tiny-q8_0.gguf', target);
    const nested = writeHfFile(hub, 'org/Tiny-GGUF', 'bbbb2222', 'sub/draft.gguf', draft);
    writeFile(join(hub, 'datasets--org--data', 'snapshots', 'r', 'x.gguf'), target);
    writeFile(join(hub, 'models--org--Tiny-GGUF', '.no_exist', 'r', 'y.gguf'), draft);
    const r = await discoverModels(ctx());
    assert.deepEqual(r.models.map(brief), [
      { source: 'huggingface', name: 'org/Tiny-GGUF/sub/draft', path: nested },
      { source: 'huggingface', name: 'org/Tiny-GGUF/tiny-q8_0', path: link },
    ]);
    assert.equal(r.models[1].bytes, target.length);
    assert.deepEqual(r.models[1].alsoAs, [
      { source: 'huggingface', name: 'org/Tiny-GGUF/tiny-q8_0', path: again },
    ]);
    assert.equal(r.models[1].supported, true);
  });

  it('Hugging Face: HF_HUB_CACHE, else HF_HOME/hub, else XDG_CACHE_HOME', async () => {
    const hub = join(home, 'hubcache');
    writeHfFile(hub, 'a/B', 'r1', 'm.gguf', draft);
    assert.equal((await discoverModels(ctx({ HF_HUB_CACHE: hub }))).models[0].name, 'a/B/m');
    writeHfFile(join(home, 'hfhome', 'hub'), 'c/D', 'r1', 'm.gguf', draft);
    const viaHome = await discoverModels(ctx({ HF_HOME: join(home, 'hfhome') }));
    assert.equal(viaHome.models[0].name, 'c/D/m');
    writeHfFile(join(home, 'xdg', 'huggingface', 'hub'), 'e/F', 'r1', 'm.gguf', draft);
    const viaXdg = await discoverModels(ctx({ XDG_CACHE_HOME: join(home, 'xdg') }));
    assert.deepEqual(
      viaXdg.models.map((m) => `${m.source} ${m.name}`),
      ['huggingface e/F/m'],
      'XDG_CACHE_HOME moves the caches',
    );
  });

  it('llama.cpp: LLAMA_CACHE or ~/.cache/llama.cpp, by file name; a broken link says so', async () => {
    const cache = join(home, '.cache', 'llama.cpp');
    writeFile(join(cache, 'org_Tiny-GGUF_tiny-q8_0.gguf'), target);
    writeFile(join(cache, 'org_Tiny-GGUF_tiny-q8_0.gguf.json'), '{}');
    symlinkSync(join(cache, 'nowhere'), join(cache, 'dangling.gguf'));
    const r = await discoverModels(ctx());
    assert.deepEqual(
      r.models.map((m) => [m.source, m.name, m.supported]),
      [
        ['llama.cpp', 'dangling', false],
        ['llama.cpp', 'org_Tiny-GGUF_tiny-q8_0', true],
      ],
    );
    assert.match(r.models[0].reason!, /file not found/);
    const moved = join(home, 'lc');
    writeFile(join(moved, 'x.gguf'), draft);
    const viaEnv = await discoverModels(ctx({ LLAMA_CACHE: moved }));
    assert.deepEqual(viaEnv.models.map(brief), [
      { source: 'llama.cpp', name: 'x', path: join(moved, 'x.gguf') },
    ]);
  });

  it('added folders: nested files, ~ expanded, link loops end, a store added again listed once', async () => {
    const extra = join(home, 'models');
    writeFile(join(extra, 'a', 'b', 'deep.gguf'), target);
    writeFile(join(extra, '.hidden', 'secret.gguf'), target);
    writeFile(join(extra, 'l1', 'l2', 'l3', 'l4', 'l5', 'too-deep.gguf'), target);
    symlinkSync(extra, join(extra, 'a', 'loop'));
    const lm = join(home, '.lmstudio', 'models', 'p', 'r');
    writeFile(join(lm, 'm.gguf'), draft);
    const r = await discoverModels(ctx({}, ['~/models', join(home, '.lmstudio', 'models')]));
    assert.deepEqual(r.models.map(brief), [
      { source: 'lmstudio', name: 'p/r/m', path: join(lm, 'm.gguf') },
      { source: 'folder', name: 'a/b/deep', path: join(extra, 'a', 'b', 'deep.gguf') },
    ]);
    assert.deepEqual(r.models[0].alsoAs, [
      { source: 'folder', name: 'p/r/m', path: join(lm, 'm.gguf') },
    ]);
    assert.ok(r.searched.includes(extra));
  });

  it('pairs a draft with its target across sources', async () => {
    const t = writeOllamaModel(
      join(home, '.ollama', 'models'),
      ['registry.ollama.ai', 'library', 'tiny', 'latest'],
      target,
    );
    const d = writeFile(join(home, '.lmstudio', 'models', 'p', 'r', 'draft.gguf'), draft);
    writeFile(join(home, '.cache', 'llama.cpp', 'other.gguf'), other);
    const r = await discoverModels(ctx());
    assert.deepEqual(r.pairs, [{ target: t, draft: d }]);
    const byPath = new Map(r.models.map((m) => [m.path, m]));
    assert.equal(byPath.get(t)!.draft, d);
    assert.deepEqual(byPath.get(d)!.draftFor, [t]);
  });

  it('changes nothing: every file, link and folder as it was', async () => {
    const store = join(home, '.ollama', 'models');
    writeOllamaModel(store, ['registry.ollama.ai', 'library', 'tiny', 'latest'], target);
    writeHfFile(join(home, '.cache', 'huggingface', 'hub'), 'o/N', 'r', 'f.gguf', draft);
    writeFile(join(home, '.lmstudio', 'models', 'p', 'r', 'x.gguf'), other);
    writeFile(join(home, '.cache', 'llama.cpp', 'bad.gguf'), 'GGUF garbage');
    mkdirSync(join(home, 'empty'));
    const before = snapshotTree(home);
    const r = await discoverModels(ctx({}, [join(home, 'empty')]));
    assert.equal(r.models.length, 4);
    assert.deepEqual(snapshotTree(home), before);
  });
});
