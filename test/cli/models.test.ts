// `leapfrog models` as a user runs it, over a home folder written here as the tools leave
// it: an Ollama store, LM Studio's folder, the Hugging Face cache (snapshot links into
// blobs), llama.cpp's cache with a corrupt and a truncated file, and added folders (one of
// them the bundled models). The JSON is checked field by field, the table by its lines, the
// bad input by its one error line; and the files are unchanged afterwards.
import { strict as assert } from 'node:assert';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SUPPORTED_ARCHITECTURES } from '../../engine/models/discovery/ggml-types';
import type { DiscoveredModel, ModelPair } from '../../engine/protocol';
import { GGMLType } from '../fixtures/gguf-writer';
import { cliBuilt, repoRoot, skipBecause } from '../support/paths';
import { runCli } from '../support/run-cli';
import {
  PLAIN_TOKENS,
  snapshotTree,
  tinyGguf,
  writeFile,
  writeHfFile,
  writeOllamaModel,
} from '../unit/model-discovery-fixtures';

/** Variables that move the stores: cleared, so only the home written here is searched. */
const STORE_VARIABLES = [
  'HOME',
  'XDG_CACHE_HOME',
  'OLLAMA_MODELS',
  'HF_HUB_CACHE',
  'HF_HOME',
  'LLAMA_CACHE',
];

describe('leapfrog models', function () {
  this.timeout(60_000);
  const root = mkdtempSync(join(tmpdir(), 'leapfrog-cli-models-'));
  const home = join(root, 'home');
  const extra = join(root, 'extra');
  const saved = new Map(STORE_VARIABLES.map((k) => [k, process.env[k]]));
  const target = tinyGguf({ hidden: 128, type: GGMLType.Q8_0, fileType: 7, chatTemplate: '{{x}}' });
  const targetF16 = tinyGguf({ hidden: 128, type: GGMLType.F16, context: 8192 });
  const draft = tinyGguf({ hidden: 32, layers: 1, type: GGMLType.Q8_0, fileType: 7 });
  const plain = tinyGguf({
    arch: 'llama',
    tokenizer: 'llama',
    tokens: PLAIN_TOKENS,
    context: 2048,
  });
  const phi = tinyGguf({ arch: 'falcon', chatTemplate: '{{x}}' });
  const paths: Record<string, string> = {};
  let untouched: Record<string, string>;

  before(function () {
    if (!cliBuilt) skipBecause(this, 'not built (npm run build)');
    const ollama = join(home, '.ollama', 'models');
    const key = ['registry.ollama.ai', 'library', 'tiny'] as const;
    paths.ollama = writeOllamaModel(ollama, [...key, '7b'], target.bytes);
    writeOllamaModel(ollama, [...key, 'latest'], target.bytes);
    paths.brokenManifest = writeFile(join(ollama, 'manifests', ...key.slice(0, 2), 'x', 'y'), '[');
    const lm = join(home, '.lmstudio', 'models', 'pub', 'Tiny-GGUF');
    paths.lmstudio = writeFile(join(lm, 'tiny-draft-Q8_0.gguf'), draft.bytes);
    writeFile(join(lm, 'mmproj-tiny-f16.gguf'), draft.bytes);
    writeFile(join(lm, 'tiny-00002-of-00002.gguf'), draft.bytes);
    const hub = join(home, '.cache', 'huggingface', 'hub');
    paths.hf = writeHfFile(hub, 'org/Tiny-GGUF', '0123abcd', 'tiny-f16.gguf', targetF16.bytes);
    paths.phi = writeHfFile(hub, 'org/Phi-GGUF', '4567cdef', 'phi.gguf', phi.bytes);
    const llamaCache = join(home, '.cache', 'llama.cpp');
    paths.corrupt = writeFile(join(llamaCache, 'org_x_corrupt.gguf'), Buffer.alloc(4096, 0x5a));
    const cut = target.bytes.subarray(0, target.bytes.length - 1000);
    paths.truncated = writeFile(join(llamaCache, 'org_x_truncated.gguf'), cut);
    paths.plain = writeFile(join(extra, 'nested', 'plain.gguf'), plain.bytes);
    for (const k of STORE_VARIABLES) delete process.env[k];
    process.env.HOME = home;
    untouched = snapshotTree(root);
  });

  after(() => {
    for (const [k, v] of saved) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
    rmSync(root, { recursive: true, force: true });
  });

  /** Only what was written here (a machine's own /usr/share/ollama store is left out). */
  function ours(models: DiscoveredModel[]): DiscoveredModel[] {
    return models.filter((m) => m.path.startsWith(root) || m.path.startsWith(repoRoot));
  }

  async function json(args: string[]): Promise<{ models: DiscoveredModel[]; pairs: ModelPair[] }> {
    const r = await runCli(['models', '--json', ...args]);
    assert.equal(r.code, 0, r.stderr);
    const out = JSON.parse(r.stdout) as Record<string, unknown>;
    assert.deepEqual(Object.keys(out), ['models', 'pairs']);
    return out as { models: DiscoveredModel[]; pairs: ModelPair[] };
  }

  it('--json: every field of every model, in source order', async () => {
    const bundled = join(repoRoot, 'models');
    const { models, pairs } = await json(['--folder', extra, '--folder', bundled]);
    const found = ours(models);
    const fp = (path: string) => found.find((m) => m.path === path)?.fingerprint;
    const coderFp = found.find((m) => m.name === 'leapfrog-coder')!.fingerprint;
    const tinyFp = fp(paths.ollama)!;
    assert.match(tinyFp, /^[0-9a-f]{16}$/);
    const ok = { supported: true };
    const unreadable = {
      architecture: null,
      parameters: null,
      quantization: null,
      context: null,
      fim: false,
      chatTemplate: false,
      fingerprint: null,
      supported: false,
    };
    const expected: Partial<DiscoveredModel>[] = [
      {
        source: 'ollama',
        name: 'tiny:7b',
        path: paths.ollama,
        bytes: target.bytes.length,
        architecture: 'qwen2',
        parameters: target.parameters,
        quantization: 'Q8_0',
        context: 4096,
        fim: true,
        chatTemplate: true,
        fingerprint: tinyFp,
        ...ok,
        draft: paths.lmstudio,
        alsoAs: [{ source: 'ollama', name: 'tiny:latest', path: paths.ollama }],
      },
      { source: 'ollama', name: 'x:y', path: paths.brokenManifest, bytes: 0, ...unreadable },
      {
        source: 'lmstudio',
        name: 'pub/Tiny-GGUF/tiny-draft-Q8_0',
        path: paths.lmstudio,
        bytes: draft.bytes.length,
        architecture: 'qwen2',
        parameters: draft.parameters,
        quantization: 'Q8_0',
        context: 4096,
        fim: true,
        chatTemplate: false,
        fingerprint: tinyFp,
        ...ok,
        draftFor: [paths.ollama, paths.hf],
      },
      {
        source: 'huggingface',
        name: 'org/Phi-GGUF/phi',
        path: paths.phi,
        bytes: phi.bytes.length,
        architecture: 'falcon',
        parameters: phi.parameters,
        quantization: 'F32',
        context: 4096,
        fim: true,
        chatTemplate: true,
        fingerprint: tinyFp,
        supported: false,
        reason: `architecture 'falcon' is not supported (supported: ${SUPPORTED_ARCHITECTURES.join(', ')})`,
      },
      {
        source: 'huggingface',
        name: 'org/Tiny-GGUF/tiny-f16',
        path: paths.hf,
        bytes: targetF16.bytes.length,
        architecture: 'qwen2',
        parameters: targetF16.parameters,
        quantization: 'F16',
        context: 8192,
        fim: true,
        chatTemplate: false,
        fingerprint: tinyFp,
        ...ok,
        draft: paths.lmstudio,
      },
      {
        source: 'llama.cpp',
        name: 'org_x_corrupt',
        path: paths.corrupt,
        bytes: 4096,
        ...unreadable,
        reason: 'not a GGUF file (bad magic)',
      },
      {
        source: 'llama.cpp',
        name: 'org_x_truncated',
        path: paths.truncated,
        bytes: target.bytes.length - 1000,
        architecture: 'qwen2',
        parameters: target.parameters,
        quantization: 'Q8_0',
        context: 4096,
        fim: true,
        chatTemplate: true,
        fingerprint: tinyFp,
        supported: false,
      },
      {
        source: 'folder',
        name: 'leapfrog-coder',
        path: join(bundled, 'leapfrog-coder.gguf'),
        architecture: 'qwen2',
        quantization: 'Q8_0',
        fim: false,
        chatTemplate: true,
        fingerprint: coderFp,
        ...ok,
        draft: join(bundled, 'leapfrog-coder-draft.gguf'),
      },
      {
        source: 'folder',
        name: 'leapfrog-coder-draft',
        fingerprint: coderFp,
        ...ok,
        draftFor: [join(bundled, 'leapfrog-coder.gguf')],
      },
      {
        source: 'folder',
        name: 'nested/plain',
        path: paths.plain,
        bytes: plain.bytes.length,
        architecture: 'llama',
        parameters: plain.parameters,
        quantization: 'F32',
        context: 2048,
        fim: false,
        chatTemplate: false,
        ...ok,
      },
    ];
    assert.equal(found.length, expected.length, found.map((m) => m.name).join(', '));
    expected.forEach((want, i) => {
      const got = found[i] as unknown as Record<string, unknown>;
      for (const [field, value] of Object.entries(want)) {
        assert.deepEqual(got[field], value, `${want.name}: ${field}`);
      }
      // The required fields are always there; `reason` exactly when unsupported.
      for (const field of [
        'source',
        'name',
        'path',
        'bytes',
        'architecture',
        'quantization',
        'fim',
        'fingerprint',
        'supported',
      ]) {
        assert.ok(field in got, `${want.name}: ${field} present`);
      }
      assert.equal('reason' in got, got.supported === false, `${want.name}: reason`);
    });
    assert.match(found[1].reason!, /^unreadable manifest \(.*JSON/);
    assert.match(found[6].reason!, /^truncated: tensor '.+' ends at byte \d+, past the end/);
    assert.notEqual(fp(paths.plain), tinyFp);
    assert.notEqual(coderFp, tinyFp);
    assert.deepEqual(
      pairs.filter((p) => p.target.startsWith(root) || p.target.startsWith(repoRoot)),
      [
        { target: paths.ollama, draft: paths.lmstudio },
        { target: paths.hf, draft: paths.lmstudio },
        {
          target: join(bundled, 'leapfrog-coder.gguf'),
          draft: join(bundled, 'leapfrog-coder-draft.gguf'),
        },
      ],
    );
  });

  it('the table: one row per model, its path, why it cannot load, its draft', async () => {
    const r = await runCli(['models', `--folder=${extra}`]);
    assert.equal(r.code, 0, r.stderr);
    const lines = r.stdout.split('\n');
    assert.match(lines[0], /^SOURCE\s+NAME\s+ARCH\s+PARAMS\s+QUANT\s+CTX\s+FIM\s+CHAT\s+SIZE$/);
    const row = lines.findIndex((l) => l.startsWith('ollama') && l.includes('tiny:7b'));
    assert.ok(row > 0, r.stdout);
    assert.match(lines[row], /qwen2\s+148K\s+Q8_0\s+4096\s+yes\s+yes\s+\d+\.\d KB$/);
    assert.equal(lines[row + 1].trim(), paths.ollama);
    assert.equal(lines[row + 2].trim(), 'draft: pub/Tiny-GGUF/tiny-draft-Q8_0 (lmstudio)');
    const corrupt = lines.findIndex((l) => l.includes('org_x_corrupt'));
    assert.match(
      lines[corrupt],
      /^llama\.cpp\s+org_x_corrupt\s+\?\s+\?\s+\?\s+\?\s+no\s+no\s+4\.1 KB$/,
    );
    assert.equal(lines[corrupt + 2].trim(), 'unsupported: not a GGUF file (bad magic)');
    assert.match(r.stdout, /\n\d+ models, \d+ the engine can load, \d+ with a draft\n$/);
  });

  it('bad usage and bad folders: one error line', async () => {
    const cases: [string[], number, RegExp][] = [
      [['models', '--folder'], 2, /^leapfrog: error: option '--folder' needs a value$/],
      [['models', 'stray'], 2, /^leapfrog: error: unexpected argument 'stray'$/],
      [['models', '--jsn'], 2, /^leapfrog: error: unknown option '--jsn'$/],
      [
        ['models', '--folder', join(root, 'nope')],
        1,
        /^leapfrog: error: .*nope: folder not found$/,
      ],
      [['models', '--folder', paths.plain], 1, /^leapfrog: error: .*plain\.gguf: not a folder$/],
    ];
    for (const [args, code, message] of cases) {
      const r = await runCli(args);
      assert.equal(r.code, code, `${args.join(' ')}: ${r.stderr}`);
      assert.match(r.stderr.split('\n')[0], message);
      assert.equal(r.stdout, '');
    }
  });

  it('an empty home: no models, and the table says where it looked', async () => {
    const empty = join(root, 'empty-home');
    process.env.HOME = empty;
    try {
      const { models, pairs } = await json([]);
      assert.deepEqual(ours(models), []);
      assert.deepEqual(
        pairs.filter((p) => p.target.startsWith(root)),
        [],
      );
      const r = await runCli(['models']);
      // (A machine with Ollama's service store in /usr/share has models even so.)
      if (models.length === 0) {
        assert.match(r.stdout, /^no GGUF models found; looked in:\n/);
        assert.ok(r.stdout.includes(`  ${join(empty, '.ollama', 'models')}\n`));
        assert.ok(r.stdout.includes(`  ${join(empty, '.cache', 'huggingface', 'hub')}\n`));
      }
    } finally {
      process.env.HOME = home;
    }
  });

  it('changed no file, link or folder', () => {
    assert.deepEqual(snapshotTree(root), untouched);
  });
});
