// Draft pairing: a supported model with the same tokenizer fingerprint and at most a quarter
// of the target's parameters; the largest with at most an eighth when there is one, else the
// smallest; never across vocabularies, never an unsupported file.
import { strict as assert } from 'node:assert';
import type { DiscoveredModel } from '../../engine/protocol';
import { pairDrafts } from '../../engine/models/discovery/pairing';

function model(name: string, parameters: number, more: Partial<DiscoveredModel> = {}) {
  const m: DiscoveredModel = {
    source: 'folder',
    name,
    path: `/m/${name}.gguf`,
    bytes: parameters,
    architecture: 'qwen2',
    parameters,
    quantization: 'Q8_0',
    context: 32768,
    fim: true,
    chatTemplate: true,
    fingerprint: 'aaaaaaaaaaaaaaaa',
    supported: true,
    ...more,
  };
  return m;
}

const draftOf = (models: DiscoveredModel[]) =>
  Object.fromEntries(pairDrafts(models).map((p) => [p.target, p.draft]));

describe('model discovery: draft pairing', () => {
  it('the Qwen2.5-Coder family: 0.5B drafts 7B and 3B; 1.5B drafts 14B; 3B drafts 32B', () => {
    const family = [
      model('0.5b', 0.49e9),
      model('1.5b', 1.54e9),
      model('3b', 3.09e9),
      model('7b', 7.6e9),
      model('14b', 14.7e9),
      model('32b', 32.8e9),
    ];
    assert.deepEqual(draftOf(family), {
      '/m/3b.gguf': '/m/0.5b.gguf', // 1/6: the only one under 1/4
      '/m/7b.gguf': '/m/0.5b.gguf',
      '/m/14b.gguf': '/m/1.5b.gguf',
      '/m/32b.gguf': '/m/3b.gguf',
    });
    assert.deepEqual(family[0].draftFor, ['/m/3b.gguf', '/m/7b.gguf']);
    assert.equal(family[3].draft, '/m/0.5b.gguf');
    assert.equal(family[0].draft, undefined);
  });

  it('between 1/8 and 1/4 only: the smallest of them', () => {
    assert.deepEqual(draftOf([model('t', 100), model('d20', 20), model('d15', 15)]), {
      '/m/t.gguf': '/m/d15.gguf',
    });
  });

  it('equal sizes: the smaller file, then the name', () => {
    const pick = draftOf([
      model('t', 1000),
      model('q8', 100, { bytes: 100 }),
      model('q4', 100, { bytes: 60 }),
      model('q4b', 100, { bytes: 60 }),
    ]);
    assert.equal(pick['/m/t.gguf'], '/m/q4.gguf');
  });

  it('no pair across fingerprints, with unsupported or unknown models, or above 1/4', () => {
    assert.deepEqual(
      draftOf([
        model('t', 1000),
        model('other-vocab', 10, { fingerprint: 'bbbbbbbbbbbbbbbb' }),
        model('unsupported', 10, { supported: false, reason: 'tensor type IQ4_XS' }),
        model('unknown-vocab', 10, { fingerprint: null }),
        model('too-big', 260),
      ]),
      {},
    );
    assert.deepEqual(
      draftOf([model('t', 1000, { supported: false }), model('d', 10)]),
      {},
      'an unsupported target gets no draft',
    );
  });
});
