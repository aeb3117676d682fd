// What "Download Model…" makes of what the user types (extension/download/source.ts): URLs,
// Hugging Face page URLs, `org/repo` and `org/repo/file`, file names and sha256s.
import { strict as assert } from 'node:assert';
import {
  checkRepoFile,
  checkSha256Input,
  formatBytes,
  huggingFaceFileUrl,
  parseModelSource,
} from '../../extension/download/source';

describe('Download Model…: what the user typed', () => {
  it('takes a URL as it is', () => {
    assert.deepEqual(parseModelSource(' https://example.com/models/a.gguf '), {
      kind: 'url',
      url: 'https://example.com/models/a.gguf',
    });
  });

  it('turns a Hugging Face page URL into the file’s download URL', () => {
    assert.deepEqual(
      parseModelSource(
        'https://huggingface.co/Qwen/Qwen2.5-Coder-1.5B-Instruct-GGUF/blob/main/q4.gguf',
      ),
      {
        kind: 'url',
        url: 'https://huggingface.co/Qwen/Qwen2.5-Coder-1.5B-Instruct-GGUF/resolve/main/q4.gguf',
      },
    );
    assert.deepEqual(parseModelSource('https://huggingface.co/org/repo'), {
      kind: 'hf-repo',
      repo: 'org/repo',
    });
  });

  it('takes org/repo (then asks for the file) and org/repo/file', () => {
    assert.deepEqual(parseModelSource('bartowski/Qwen2.5-Coder-7B-GGUF'), {
      kind: 'hf-repo',
      repo: 'bartowski/Qwen2.5-Coder-7B-GGUF',
    });
    assert.deepEqual(parseModelSource('org/repo/sub dir/m.gguf'), {
      kind: 'url',
      url: 'https://huggingface.co/org/repo/resolve/main/sub%20dir/m.gguf',
    });
    assert.equal(
      huggingFaceFileUrl('org/repo', 'a+b.gguf', 'v1.0'),
      'https://huggingface.co/org/repo/resolve/v1.0/a%2Bb.gguf',
    );
  });

  it('says why when it is neither', () => {
    for (const bad of ['', 'just-a-name', 'ftp://host/x.gguf', '/abs/path.gguf', 'a b/c']) {
      const s = parseModelSource(bad);
      assert.equal(s.kind, 'invalid', bad);
    }
    assert.match(
      (parseModelSource('ftp://host/x.gguf') as { why: string }).why,
      /only http and https/,
    );
  });

  it('checks the file name and the sha256', () => {
    assert.equal(checkRepoFile('m-q4_k_m.gguf'), undefined);
    assert.equal(checkRepoFile('sub/m.gguf'), undefined);
    assert.match(checkRepoFile('m.bin')!, /GGUF/);
    assert.match(checkRepoFile('../m.gguf')!, /without leading/);
    assert.match(checkRepoFile('/m.gguf')!, /without leading/);
    assert.equal(checkSha256Input(''), undefined);
    assert.equal(checkSha256Input('A'.repeat(64)), undefined);
    assert.match(checkSha256Input('abc')!, /64 hexadecimal/);
  });

  it('formats sizes', () => {
    assert.equal(formatBytes(999), '999 bytes');
    assert.equal(formatBytes(1500), '1.5 kB');
    assert.equal(formatBytes(4_683_072_000), '4.7 GB');
    assert.equal(formatBytes(262_144), '262 kB');
  });
});
