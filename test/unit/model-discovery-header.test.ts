// The GGUF header reader and the facts discovery derives from it, checked against the real
// native loader (what it loads, discovery calls supported; its parameter count, context,
// chat template and FIM tokens, discovery reports too), and against corrupt, truncated and
// hostile files: each gives a reason string, quickly, and never throws.
import { strict as assert } from 'node:assert';
import { execFileSync } from 'node:child_process';
import {
  closeSync,
  existsSync,
  ftruncateSync,
  mkdtempSync,
  openSync,
  readFileSync,
  rmSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describeModelFile } from '../../engine/models/discovery/model-facts';
import { readGgufHeader } from '../../engine/models/discovery/gguf-header';
import { loadAddon } from '../../engine/native/load-addon';
import { GGMLType, bool, str, u32 } from '../fixtures/gguf-writer';
import { makeRandomModel } from '../fixtures/random-model';
import { missingVocab, vocabPath } from '../fixtures/shared-data';
import { addonBuilt, repoRoot, sharedData, skipBecause } from '../support/paths';
import { CODER_TOKENS, PLAIN_TOKENS, tinyGguf, writeFile } from './model-discovery-fixtures';

const dir = mkdtempSync(join(tmpdir(), 'leapfrog-discovery-header-'));

function u64(n: number): Buffer {
  const b = Buffer.alloc(8);
  b.writeBigUInt64LE(BigInt(n));
  return b;
}
function ggufString(s: string): Buffer {
  return Buffer.concat([u64(Buffer.byteLength(s)), Buffer.from(s)]);
}

/** A copy of `bytes` with a tensor's type field (after its name, n_dims and dims) set. */
function withTensorType(bytes: Buffer, tensor: string, nDims: number, type: number): Buffer {
  const out = Buffer.from(bytes);
  const name = ggufString(tensor);
  const at = out.indexOf(name);
  assert.ok(at >= 0, `tensor ${tensor} not found`);
  out.writeUInt32LE(type, at + name.length + 4 + 8 * nDims);
  return out;
}

describe('model discovery: facts from GGUF headers', () => {
  after(() => rmSync(dir, { recursive: true, force: true }));

  describe('agree with the native loader', function () {
    this.timeout(120_000);
    const files: string[] = [];

    before(async function () {
      if (!addonBuilt) skipBecause(this, 'native addon not built');
      files.push(join(repoRoot, 'models', 'leapfrog-coder.gguf'));
      files.push(join(repoRoot, 'models', 'leapfrog-coder-draft.gguf'));
      const data = sharedData();
      if (data) {
        const stories = readFileSync(join(data, 'models', 'stories260K.gguf'));
        files.push(join(data, 'models', 'stories260K.gguf'));
        // The same file made unloadable in the ways discovery must recognise.
        const arch = Buffer.concat([
          ggufString('general.architecture'),
          u32b(8),
          ggufString('llama'),
        ]);
        const at = stories.indexOf(arch);
        assert.ok(at >= 0);
        const otherArch = Buffer.from(stories);
        Buffer.from('falco').copy(otherArch, at + arch.length - 5);
        files.push(writeFile(join(dir, 'other-arch.gguf'), otherArch));
        const q81 = withTensorType(stories, 'token_embd.weight', 2, GGMLType.Q8_1);
        files.push(writeFile(join(dir, 'q8_1.gguf'), q81));
        files.push(
          writeFile(join(dir, 'type-77.gguf'), withTensorType(stories, 'output.weight', 2, 77)),
        );
        const cut = stories.subarray(0, Math.floor(stories.length * 0.6));
        files.push(writeFile(join(dir, 'truncated.gguf'), cut));
        files.push(vocabPath('qwen2'));
      }
      if (!missingVocab('qwen2', 'llama-spm')) {
        files.push(await makeRandomModel({ arch: 'qwen3', type: 'Q8_0' }));
        files.push(await makeRandomModel({ arch: 'qwen2', type: 'Q4_K' }));
        files.push(await makeRandomModel({ arch: 'llama', type: 'Q6_K' }));
        files.push(await makeRandomModel({ arch: 'qwen3moe', type: 'Q8_0' }));
        files.push(
          await makeRandomModel({
            arch: 'qwen3',
            type: 'Q8_0',
            ropeScaling: { type: 'yarn', factor: 4, originalContext: 256 },
          }),
        );
      }
      if (!data) console.log('      (../shared/data absent: the bundled models only)');
    });

    function u32b(n: number): Buffer {
      const b = Buffer.alloc(4);
      b.writeUInt32LE(n);
      return b;
    }

    it('supported exactly when the engine loads the file, with the same figures', async () => {
      const addon = loadAddon();
      let loaded = 0;
      let refused = 0;
      for (const file of files) {
        const facts = await describeModelFile(file);
        const model = await addon.loadModel(file, { threads: 1 }).catch((e: Error) => e);
        if (model instanceof Error) {
          refused++;
          assert.equal(facts.supported, false, `${file}: the engine refuses it (${model.message})`);
          assert.ok(facts.reason && facts.reason.length > 5, `${file}: a reason`);
          continue;
        }
        loaded++;
        const info = model.info();
        model.free();
        assert.equal(facts.supported, true, `${file}: loads, but: ${facts.reason}`);
        assert.equal(facts.reason, undefined);
        assert.equal(facts.architecture, info.architecture, file);
        assert.equal(facts.parameters, info.nParams, file);
        assert.equal(facts.context, info.nCtxTrain, file);
        assert.equal(facts.chatTemplate, info.chatTemplate !== '', file);
        const fimIds = info.fim.prefix >= 0 && info.fim.suffix >= 0 && info.fim.middle >= 0;
        assert.equal(facts.fim, fimIds && info.fimTrained, file);
        assert.match(facts.fingerprint ?? '', /^[0-9a-f]{16}$/);
      }
      assert.ok(loaded >= 2, `${loaded} loaded`);
      if (sharedData()) assert.ok(refused >= 5, `${refused} refused`);
    });

    it('the reasons name what is wrong', async function () {
      if (!sharedData()) skipBecause(this, '../shared/data is absent');
      const reason = async (name: string) => (await describeModelFile(join(dir, name))).reason;
      assert.match((await reason('other-arch.gguf'))!, /architecture 'falco' is not supported/);
      assert.match((await reason('q8_1.gguf'))!, /tensor type Q8_1 is not supported.*token_embd/);
      assert.match((await reason('type-77.gguf'))!, /tensor type type 77 is not supported/);
      assert.match((await reason('truncated.gguf'))!, /^truncated: /);
      const vocab = await describeModelFile(vocabPath('qwen2'));
      assert.equal(vocab.reason, 'no weights (a vocabulary-only GGUF)');
    });

    it('the bundled target and draft share a fingerprint; other vocabularies do not', async () => {
      const target = await describeModelFile(join(repoRoot, 'models', 'leapfrog-coder.gguf'));
      const draft = await describeModelFile(join(repoRoot, 'models', 'leapfrog-coder-draft.gguf'));
      assert.equal(target.fingerprint, draft.fingerprint);
      assert.equal(target.quantization, 'Q8_0');
      assert.equal(target.fim, false, 'leapfrog.prompt.fim = false: FIM tokens, not learned');
      if (sharedData()) {
        const stories = await describeModelFile(join(sharedData()!, 'models', 'stories260K.gguf'));
        assert.notEqual(stories.fingerprint, target.fingerprint);
      }
    });
  });

  describe('tiny files written here', () => {
    it('reports every field of a well-formed file', async () => {
      const { bytes, parameters } = tinyGguf({
        type: GGMLType.Q8_0,
        fileType: 7,
        context: 32768,
        chatTemplate: '{{ messages }}',
      });
      const f = await describeModelFile(writeFile(join(dir, 'tiny.gguf'), bytes));
      assert.deepEqual(
        { ...f, fingerprint: undefined },
        {
          architecture: 'qwen2',
          parameters,
          quantization: 'Q8_0',
          context: 32768,
          fim: true,
          chatTemplate: true,
          fingerprint: undefined,
          supported: true,
        },
      );
      assert.match(f.fingerprint!, /^[0-9a-f]{16}$/);
    });

    it('quantization: general.file_type by name, else the type of most weights', async () => {
      const named = tinyGguf({ type: GGMLType.Q4_K, hidden: 256, fileType: 15 });
      const f1 = await describeModelFile(writeFile(join(dir, 'q4km.gguf'), named.bytes));
      assert.equal(f1.quantization, 'Q4_K_M');
      const unnamed = tinyGguf({ type: GGMLType.Q6_K, hidden: 256 });
      const f2 = await describeModelFile(writeFile(join(dir, 'q6k.gguf'), unnamed.bytes));
      assert.equal(f2.quantization, 'Q6_K', 'matrices are Q6_K, the norms F32');
    });

    it('fim: needs all three tokens, and leapfrog.prompt.fim not false', async () => {
      const plain = tinyGguf({ tokens: PLAIN_TOKENS, tokenizer: 'llama', arch: 'llama' });
      assert.equal(
        (await describeModelFile(writeFile(join(dir, 'p.gguf'), plain.bytes))).fim,
        false,
      );
      const noMiddle = tinyGguf({ tokens: CODER_TOKENS.filter((t) => t !== '<|fim_middle|>') });
      assert.equal(
        (await describeModelFile(writeFile(join(dir, 'nm.gguf'), noMiddle.bytes))).fim,
        false,
      );
      const byIds = tinyGguf({
        tokens: PLAIN_TOKENS,
        meta: [
          ['tokenizer.ggml.fim_pre_token_id', u32(3)],
          ['tokenizer.ggml.fim_suf_token_id', u32(4)],
          ['tokenizer.ggml.fim_mid_token_id', u32(5)],
        ],
      });
      assert.equal(
        (await describeModelFile(writeFile(join(dir, 'ids.gguf'), byIds.bytes))).fim,
        true,
      );
      const untrained = tinyGguf({ meta: [['leapfrog.prompt.fim', bool(false)]] });
      const f = await describeModelFile(writeFile(join(dir, 'untrained.gguf'), untrained.bytes));
      assert.equal(f.fim, false);
    });

    it('the fingerprint follows the token list, the tokenizer model and pre-tokenizer only', async () => {
      const fp = async (name: string, o: Parameters<typeof tinyGguf>[0]) =>
        (await describeModelFile(writeFile(join(dir, name), tinyGguf(o).bytes))).fingerprint;
      const base = await fp('fp0.gguf', {});
      assert.equal(await fp('fp1.gguf', { hidden: 32, layers: 1, type: GGMLType.F16 }), base);
      assert.notEqual(await fp('fp2.gguf', { tokens: [...CODER_TOKENS, 'extra'] }), base);
      assert.notEqual(await fp('fp3.gguf', { tokens: [...CODER_TOKENS].reverse() }), base);
      const renamed = CODER_TOKENS.map((t) => (t === 'def' ? 'fed' : t));
      assert.notEqual(await fp('fp5.gguf', { tokens: renamed }), base, 'same lengths, other text');
      assert.notEqual(await fp('fp4.gguf', { tokenizer: 'llama' }), base);
    });

    it('split models, unknown tokenizers and RoPE scaling types are unsupported, with the reason', async () => {
      const reason = async (name: string, o: Parameters<typeof tinyGguf>[0]) =>
        (await describeModelFile(writeFile(join(dir, name), tinyGguf(o).bytes))).reason;
      assert.match(
        (await reason('split.gguf', { meta: [['split.count', u32(3)]] }))!,
        /split into 3 files/,
      );
      assert.match((await reason('bert.gguf', { tokenizer: 'bert' }))!, /tokenizer 'bert'/);
      assert.match(
        (await reason('longrope.gguf', { meta: [['qwen2.rope.scaling.type', str('longrope')]] }))!,
        /RoPE scaling 'longrope' is not supported \(supported: none, linear, yarn\)/,
      );
      assert.equal(
        await reason('yarn.gguf', { meta: [['qwen2.rope.scaling.type', str('yarn')]] }),
        undefined,
      );
      assert.match((await reason('falcon.gguf', { arch: 'falcon' }))!, /architecture 'falcon'/);
      assert.match(
        (await reason('phi-128k.gguf', {
          arch: 'phi3',
          extraTensors: ['rope_factors_long.weight'],
        }))!,
        /long-context RoPE factors/,
      );
    });
  });

  describe('corrupt, truncated and hostile files', function () {
    this.timeout(60_000);
    const good = tinyGguf({ chatTemplate: 'x'.repeat(300) }).bytes;

    it('every cut of a file gives a reason, never a throw', async () => {
      // Cuts inside the header (every 7 bytes) and inside the data.
      const headerEnd = (await readGgufHeader(writeFile(join(dir, 'good.gguf'), good))).dataStart;
      const cuts: number[] = [];
      for (let n = 0; n < headerEnd + 64; n += 7) cuts.push(n);
      cuts.push(good.length - 1, Math.floor(good.length / 2));
      for (const n of cuts) {
        const f = await describeModelFile(writeFile(join(dir, 'cut.gguf'), good.subarray(0, n)));
        assert.equal(f.supported, false, `cut at ${n} of ${good.length}`);
        assert.match(f.reason ?? '', /truncated|not a GGUF/, `cut at ${n}: ${f.reason}`);
      }
    });

    it('random corruption gives facts or a reason, never a throw', async () => {
      let seed = 12345;
      const next = () => (seed = (seed * 1103515245 + 12345) & 0x7fffffff);
      for (let i = 0; i < 300; i++) {
        const bad = Buffer.from(good);
        for (let k = 0; k < 1 + (i % 4); k++) bad[next() % 600] = next() & 0xff;
        const f = await describeModelFile(writeFile(join(dir, 'noise.gguf'), bad));
        assert.ok(f.supported || (f.reason && f.reason.length > 0), `iteration ${i}`);
      }
    });

    it('lengths and counts larger than the file are refused at once', async () => {
      // Each followed by 64 bytes, so that the counts themselves are plausible.
      const header = (nTensors: number, nKv: number, rest: Buffer[] = []) =>
        Buffer.concat([
          Buffer.from('GGUF'),
          Buffer.from([3, 0, 0, 0]),
          u64(nTensors),
          u64(nKv),
          ...rest,
          Buffer.alloc(64),
        ]);
      const cases: [Buffer, RegExp][] = [
        [header(0, 2 ** 40), /implausible count of \d+ metadata entries/],
        [header(2 ** 50, 0), /implausible count of \d+ tensor infos/],
        [header(1000, 0), /1000 tensor infos cannot fit in the 64 bytes left/],
        [header(0, 1, [u64(2 ** 62)]), /corrupt header: metadata key 0/],
        [header(0, 1, [ggufString('k'), Buffer.from([8, 0, 0, 0]), u64(2 ** 40)]), /truncated/],
        [
          header(0, 1, [ggufString('k'), Buffer.from([9, 0, 0, 0, 8, 0, 0, 0]), u64(2 ** 27)]),
          /truncated/,
        ],
        [header(0, 1, [ggufString('k'), Buffer.from([99, 0, 0, 0])]), /has type 99/],
        [Buffer.from('GGML\x03\x00\x00\x00'), /not a GGUF file \(bad magic\)/],
        [
          Buffer.concat([Buffer.from('GGUF'), Buffer.from([1, 0, 0, 0]), u64(0), u64(0)]),
          /version 1/,
        ],
        [Buffer.alloc(0), /not a GGUF file \(0 bytes\)/],
      ];
      for (const [bytes, reason] of cases) {
        const started = Date.now();
        const f = await describeModelFile(writeFile(join(dir, 'hostile.gguf'), bytes));
        assert.match(f.reason ?? '', reason);
        assert.ok(Date.now() - started < 3000, `${reason}: ${Date.now() - started} ms`); // a hang, not a speed check
      }
    });

    it('a missing file, a folder and a FIFO named .gguf: reasons, no hang', async function () {
      assert.match((await describeModelFile(join(dir, 'absent.gguf'))).reason!, /gone/);
      assert.match((await describeModelFile(dir)).reason!, /cannot read|not a regular file/);
      const fifo = join(dir, 'pipe.gguf');
      try {
        execFileSync('mkfifo', [fifo]);
      } catch {
        skipBecause(this, 'mkfifo is not available');
      }
      assert.equal((await describeModelFile(fifo)).reason, 'not a regular file');
    });
  });

  it('a 5 GB file costs its header only', async function () {
    // A tiny model followed by a 5 GB hole (a sparse file: no disk used).
    const { bytes } = tinyGguf({ layers: 0 });
    const path = writeFile(join(dir, 'huge.gguf'), bytes);
    const fd = openSync(path, 'r+');
    try {
      ftruncateSync(fd, 5 * 2 ** 30);
    } catch {
      closeSync(fd);
      skipBecause(this, 'cannot make a sparse 5 GB file here');
    }
    closeSync(fd);
    const started = Date.now();
    const h = await readGgufHeader(path);
    const f = await describeModelFile(path);
    assert.equal(h.fileSize, 5 * 2 ** 30);
    assert.equal(f.supported, true, f.reason);
    assert.ok(Date.now() - started < 3000, `${Date.now() - started} ms`); // far below reading 5 GB
    rmSync(path);
    assert.ok(!existsSync(path));
  });
});
