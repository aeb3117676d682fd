// Files under the engine (issue 18): a model file truncated, overwritten or deleted while
// loaded must not SIGBUS the process (native/src/gguf/detach.cpp), and a model larger than
// memory is refused before it is mapped (native/src/addon/host_memory.h). Each test loads a
// private copy of the bundled model in this process through the real addon: a SIGBUS here
// kills mocha, which fails the suite loudly.
// Run: npx mocha --import=tsx --timeout 120000 test/native/model-file-changes.test.ts
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { addonPath, loadAddon } from '../../engine/native/load-addon';
import type { NativeAddon, NativeModel } from '../../engine/native/addon';
import { repoRoot } from '../support/paths';
import { skipBecause } from './helpers';

const bundled = path.join(repoRoot, 'models', 'leapfrog-coder.gguf');
const PROMPT = 'def fibonacci(n):\n    if n < 2:\n        return n\n';
const MAX_TOKENS = 24;

function addonMissing(): string | undefined {
  try {
    addonPath();
  } catch (e) {
    return (e as Error).message;
  }
  if (!fs.existsSync(bundled)) return `bundled model missing (${bundled})`;
  if (!loadAddon().systemInfo().detachesModelFiles) {
    return `the native addon (${addonPath()}) predates these checks: rebuild it (npm run build)`;
  }
  return undefined;
}

/** Greedy text for PROMPT from a fresh session (every layer's weights are read again). */
async function greedy(addon: NativeAddon, model: NativeModel): Promise<string> {
  const session = addon.createSession(model, { nCtx: 256, threads: 2 });
  const params = addon.defaultGenerateParams();
  params.maxTokens = MAX_TOKENS;
  params.stopAtEog = false;
  params.sampling = { ...params.sampling, temperature: 0 };
  params.speculation = { ...params.speculation, mode: 'off' };
  let text = '';
  try {
    const handle = session.generate(model.tokenize(PROMPT, true, false), params, (_id, t) => {
      text += t;
    });
    const stats = await handle.done;
    assert.equal(stats.generated, MAX_TOKENS);
  } finally {
    session.free();
  }
  return text;
}

describe('model files changed under a loaded model', function () {
  let addon: NativeAddon;
  let dir: string;
  let copy: string;
  let expected: string;

  before(async function () {
    const why = addonMissing();
    if (why) skipBecause(this, why);
    addon = loadAddon();
    const original = await addon.loadModel(bundled, { threads: 2 });
    expected = await greedy(addon, original);
    original.free();
    assert.ok(expected.length > 0, 'the bundled model generates text');
  });

  beforeEach(function () {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'leapfrog-file-changes-'));
    copy = path.join(dir, 'model.gguf');
    fs.copyFileSync(bundled, copy);
  });

  afterEach(function () {
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('truncated to half, then to nothing, while loaded: no crash, the same output', async function () {
    const model = await addon.loadModel(copy, { threads: 2 });
    try {
      const size = fs.statSync(copy).size;
      fs.truncateSync(copy, Math.floor(size / 2));
      assert.equal(fs.statSync(copy).size, Math.floor(size / 2));
      assert.equal(await greedy(addon, model), expected);
      // Then to nothing: the embedding rows and the header (vocabulary, metadata) are gone
      // from the file too.
      fs.truncateSync(copy, 0);
      assert.equal(await greedy(addon, model), expected);
      assert.equal(model.info().path, copy);
      assert.equal(model.detokenize(model.tokenize(PROMPT, false, false), false), PROMPT);
    } finally {
      model.free();
    }
  });

  it('overwritten in place with zeros while loaded: the same output', async function () {
    const model = await addon.loadModel(copy, { threads: 2 });
    try {
      const size = fs.statSync(copy).size;
      const fd = fs.openSync(copy, 'r+');
      fs.writeSync(fd, Buffer.alloc(size), 0, size, 0);
      fs.closeSync(fd);
      fs.truncateSync(copy, 4096);
      assert.equal(await greedy(addon, model), expected);
    } finally {
      model.free();
    }
  });

  it('deleted while loaded (ollama rm): generation still works', async function () {
    const model = await addon.loadModel(copy, { threads: 2 });
    try {
      fs.unlinkSync(copy);
      assert.equal(await greedy(addon, model), expected);
    } finally {
      model.free();
    }
  });

  it('a vocabulary-only load survives truncation too', async function () {
    const vocab = await addon.loadModel(copy, { threads: 2, vocabOnly: true });
    try {
      const ids = vocab.tokenize(PROMPT, false, false);
      const info = vocab.info();
      fs.truncateSync(copy, 0);
      assert.deepEqual(vocab.info(), info); // metadata strings are views into the file
      assert.deepEqual(vocab.tokenize(PROMPT, false, false), ids);
      assert.equal(vocab.detokenize(ids, false), PROMPT);
    } finally {
      vocab.free();
    }
  });
});

describe('a model larger than memory', function () {
  const saved = process.env.LEAPFROG_MEMORY_LIMIT_BYTES;

  before(function () {
    const why = addonMissing();
    if (why) skipBecause(this, why);
  });

  afterEach(function () {
    if (saved === undefined) delete process.env.LEAPFROG_MEMORY_LIMIT_BYTES;
    else process.env.LEAPFROG_MEMORY_LIMIT_BYTES = saved;
  });

  it('is refused before it is mapped, naming both sizes', async function () {
    const size = fs.statSync(bundled).size;
    process.env.LEAPFROG_MEMORY_LIMIT_BYTES = String(size - 1);
    await assert.rejects(loadAddon().loadModel(bundled, { threads: 2 }), (e: Error) => {
      assert.match(e.message, /leapfrog-coder\.gguf: the model needs/);
      assert.ok(e.message.includes(`${size} bytes`), e.message);
      assert.ok(e.message.includes(`${size - 1} bytes`), e.message);
      assert.match(e.message, /LEAPFROG_MEMORY_LIMIT_BYTES/);
      return true;
    });
  });

  it('loads when it fits the limit exactly', async function () {
    const size = fs.statSync(bundled).size;
    process.env.LEAPFROG_MEMORY_LIMIT_BYTES = String(size);
    const model = await loadAddon().loadModel(bundled, { threads: 2 });
    model.free();
  });

  it('a limit that is not a number is a clear error', async function () {
    process.env.LEAPFROG_MEMORY_LIMIT_BYTES = 'lots';
    await assert.rejects(
      loadAddon().loadModel(bundled, { threads: 2 }),
      /LEAPFROG_MEMORY_LIMIT_BYTES='lots' is not a number of bytes/,
    );
  });
});
