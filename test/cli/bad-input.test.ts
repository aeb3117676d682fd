// Bad input through the CLI: one line `leapfrog: error: …` naming the file and the problem,
// exit code 1 (2 for usage), in under a second, never a crash or a hang.
import assert from 'node:assert/strict';
import { copyFileSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { cliBuilt, repoRoot, sharedData, skipBecause } from '../support/paths';
import { runCli } from '../support/run-cli';

const dir = join(repoRoot, 'test', '.fixtures', 'bad-input');

/** Rewrites the first occurrence of `find` in a copy of `src` (same length). */
function patched(src: string, name: string, find: Buffer, replace: Buffer): string {
  const bytes = readFileSync(src);
  const at = bytes.indexOf(find);
  assert.ok(at >= 0, `pattern not found in ${src}`);
  replace.copy(bytes, at);
  const out = join(dir, name);
  writeFileSync(out, bytes);
  return out;
}

function u64(n: number): Buffer {
  const b = Buffer.alloc(8);
  b.writeBigUInt64LE(BigInt(n));
  return b;
}

function str(s: string): Buffer {
  return Buffer.concat([u64(Buffer.byteLength(s)), Buffer.from(s)]);
}

describe('bad input gives one clear error line', function () {
  let stories = '';

  before(function () {
    const data = sharedData();
    if (!cliBuilt) skipBecause(this, 'not built (npm run build)');
    if (!data) skipBecause(this, '../shared/data is absent');
    mkdirSync(dir, { recursive: true });
    stories = join(dir, 'stories.gguf');
    copyFileSync(join(data, 'models', 'stories260K.gguf'), stories);
  });

  async function expectError(model: string, pattern: RegExp, code = 1) {
    const r = await runCli(['generate', '--model', model, '--prompt', 'Once', '--max-tokens', '4']);
    assert.equal(r.code, code, `exit code (stderr: ${r.stderr})`);
    const lines = r.stderr
      .trim()
      .split('\n')
      .filter((l) => !l.includes('warning'));
    assert.match(lines[0], /^leapfrog: error: /);
    assert.match(lines[0], pattern);
    assert.ok(r.ms < 3000, `took ${r.ms} ms`); // under a second of work, plus Node's start-up
    assert.equal(r.stdout, '');
  }

  it('a missing file', async () => {
    await expectError(join(dir, 'nope.gguf'), /nope\.gguf: model file not found/);
  });

  it('a file that is not GGUF', async () => {
    const f = join(dir, 'not.gguf');
    writeFileSync(f, 'this is not a model at all, just text\n'.repeat(10));
    await expectError(f, /not\.gguf: not a GGUF file/);
  });

  it('a truncated file', async () => {
    const f = join(dir, 'truncated.gguf');
    const bytes = readFileSync(stories);
    writeFileSync(f, bytes.subarray(0, Math.floor(bytes.length * 0.6)));
    await expectError(f, /truncated\.gguf: truncated file/);
  });

  it('an unknown tensor type', async () => {
    // token_embd.weight's info: name, n_dims=2, dims, then the type (u32).
    const name = str('token_embd.weight');
    const bytes = readFileSync(stories);
    const at = bytes.indexOf(name) + name.length + 4 + 16;
    bytes.writeUInt32LE(77, at);
    const f = join(dir, 'badtype.gguf');
    writeFileSync(f, bytes);
    await expectError(f, /badtype\.gguf: tensor 'token_embd\.weight' has unknown tensor type 77/);
  });

  it('a tensor offset past the end', async () => {
    const name = str('output_norm.weight');
    const bytes = readFileSync(stories);
    const at = bytes.indexOf(name) + name.length + 4 + 8 + 4; // 1 dim, then type, then offset
    bytes.writeBigUInt64LE(BigInt(bytes.length * 2) & ~31n, at);
    const f = join(dir, 'badoffset.gguf');
    writeFileSync(f, bytes);
    await expectError(f, /badoffset\.gguf: .*output_norm\.weight/);
  });

  it('a wrong tensor shape', async () => {
    // Make output_norm.weight 32 wide instead of the embedding width.
    const name = str('output_norm.weight');
    const bytes = readFileSync(stories);
    const at = bytes.indexOf(name) + name.length + 4;
    bytes.writeBigUInt64LE(32n, at);
    const f = join(dir, 'badshape.gguf');
    writeFileSync(f, bytes);
    await expectError(f, /badshape\.gguf: .*output_norm\.weight/);
  });

  it('an unsupported architecture', async () => {
    const key = str('general.architecture');
    const f = patched(
      stories,
      'arch.gguf',
      Buffer.concat([key, Buffer.from([8, 0, 0, 0]), str('llama')]),
      Buffer.concat([key, Buffer.from([8, 0, 0, 0]), str('gptj_')]),
    );
    await expectError(f, /arch\.gguf: .*architecture 'gptj_'/);
  });

  it('a missing metadata key', async () => {
    const f = patched(stories, 'nokey.gguf', str('llama.block_count'), str('llama.block_cXunt'));
    await expectError(f, /nokey\.gguf: missing metadata key 'llama\.block_count'/);
  });

  it('bad usage exits 2', async () => {
    const r = await runCli(['generate', '--no-such-option']);
    assert.equal(r.code, 2);
    assert.match(r.stderr.split('\n')[0], /^leapfrog: error: unknown option '--no-such-option'/);
  });

  it('a prompt longer than the context', async () => {
    const r = await runCli([
      'generate',
      '--model',
      stories,
      '--prompt',
      'Once upon a time '.repeat(1400),
      '--max-tokens',
      '4',
    ]);
    assert.equal(r.code, 1);
    assert.match(
      r.stderr,
      /^leapfrog: error: prompt \(\d+ tokens\) plus --max-tokens 4 exceeds the context/m,
    );
  });
});
