import { strict as assert } from 'node:assert';
import { buildFimPrompt, detectFimTemplate, fimPieces } from '../../engine/completion/fim-template';
import { fakeInfo } from './fake-engine';

const texts = (m: Record<number, string>) => (id: number) => m[id] ?? `?${id}`;
const parts = {
  repoName: 'repo',
  filePath: 'a.py',
  prefix: 'def f(',
  suffix: ')\n',
  extra: [{ path: 'b.py', text: 'x = 1' }],
};

describe('FIM templates', () => {
  it('recognises Qwen2.5-Coder and builds the repository-level form', () => {
    const t = detectFimTemplate(
      fakeInfo(),
      texts({
        1: '<|endoftext|>',
        2: '<|fim_prefix|>',
        3: '<|fim_suffix|>',
        4: '<|fim_middle|>',
        5: '<|repo_name|>',
        6: '<|file_sep|>',
        7: '<|im_end|>',
      }),
    );
    assert.equal(t.family, 'qwen');
    assert.deepEqual(fimPieces(t, parts), [
      5,
      'repo\n',
      6,
      'b.py\nx = 1\n',
      6,
      'a.py\n',
      2,
      'def f(',
      3,
      ')\n',
      4,
    ]);
    assert.ok(t.specialTexts.includes('<|file_sep|>'));
    assert.ok(t.stopIds.includes(6) && t.stopIds.includes(1));
  });

  it('recognises StarCoder2 with <file_sep>', () => {
    const info = fakeInfo({
      fim: { prefix: 10, suffix: 11, middle: 12, pad: -1, repo: 13, fileSep: 14 },
      eos: 0,
      eogIds: [0],
    });
    const t = detectFimTemplate(
      info,
      texts({
        0: '<|endoftext|>',
        10: '<fim_prefix>',
        11: '<fim_suffix>',
        12: '<fim_middle>',
        13: '<repo_name>',
        14: '<file_sep>',
      }),
    );
    assert.equal(t.family, 'starcoder');
    assert.deepEqual(fimPieces(t, parts), [
      13,
      'repo',
      14,
      'b.py\nx = 1\n',
      14,
      10,
      'a.py\ndef f(',
      11,
      ')\n',
      12,
    ]);
  });

  it('recognises CodeLlama (▁<PRE>) with BOS and no extra files', () => {
    const info = fakeInfo({
      bos: 1,
      addBos: true,
      eos: 2,
      eogIds: [2, 32010],
      fim: { prefix: 32007, suffix: 32008, middle: 32009, pad: -1, repo: -1, fileSep: -1 },
    });
    const t = detectFimTemplate(
      info,
      texts({
        1: '<s>',
        2: '</s>',
        32007: '▁<PRE>',
        32008: '▁<SUF>',
        32009: '▁<MID>',
        32010: '▁<EOT>',
      }),
    );
    assert.equal(t.family, 'codellama');
    assert.deepEqual(fimPieces(t, parts), [1, 32007, 'def f(', 32008, ')\n', 32009]);
  });

  it('recognises DeepSeek-Coder', () => {
    const info = fakeInfo({
      fim: { prefix: 100, suffix: 101, middle: 102, pad: -1, repo: -1, fileSep: -1 },
    });
    const t = detectFimTemplate(
      info,
      texts({ 100: '<｜fim▁begin｜>', 101: '<｜fim▁hole｜>', 102: '<｜fim▁end｜>' }),
    );
    assert.equal(t.family, 'deepseek');
    assert.deepEqual(fimPieces(t, parts), [100, 'def f(', 101, ')\n', 102]);
  });

  it('falls back to plain prefix continuation without FIM tokens', () => {
    const info = fakeInfo({
      bos: 1,
      addBos: true,
      eos: 2,
      eogIds: [2],
      fim: { prefix: -1, suffix: -1, middle: -1, pad: -1, repo: -1, fileSep: -1 },
    });
    const t = detectFimTemplate(info, texts({ 1: '<s>', 2: '</s>' }));
    assert.equal(t.family, 'none');
    assert.deepEqual(fimPieces(t, parts), [1, 'def f(']);
  });

  it('tokenizes user text with specials off, joining adjacent texts', () => {
    const t = detectFimTemplate(
      fakeInfo(),
      texts({
        2: '<|fim_prefix|>',
        3: '<|fim_suffix|>',
        4: '<|fim_middle|>',
        5: '<|repo_name|>',
        6: '<|file_sep|>',
      }),
    );
    const seen: string[] = [];
    const ids = buildFimPrompt(t, { ...parts, extra: [] }, (s) => (seen.push(s), [s.length]));
    assert.deepEqual(seen, ['repo\n', 'a.py\n', 'def f(', ')\n']);
    assert.deepEqual(ids, [5, 5, 6, 5, 2, 6, 3, 2, 4]);
  });
});
