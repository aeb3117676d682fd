// The language server's settings: initializationOptions, then didChangeConfiguration with
// `settings.leapfrog` as VS Code nests the section. Speculation changes apply at once; a
// reload is asked for only when the model, draft, backend or threads really change (VS Code
// sends the whole section, and once right after start).
import { strict as assert } from 'node:assert';
import { homedir } from 'node:os';
import { join, resolve } from 'node:path';
import { ServerSettings } from '../../engine/server/settings';
import { MAX_DRAFT_BUDGET } from '../../engine/protocol';
import { defaultGenerationSettings } from '../../engine/generation/generation-config';
import { defaultModelPath } from '../../engine/native/default-models';

const vscodeSection = (over: Record<string, unknown> = {}) => ({
  leapfrog: {
    speculation: { mode: 'auto', budget: 16 },
    backend: 'auto',
    threads: 0,
    model: '/m/target.gguf',
    draftModel: '',
    completion: { enabled: true, debounceMs: 60 },
    ...over,
  },
});

function started(init: Record<string, unknown> = { model: '/m/target.gguf' }) {
  const warnings: string[] = [];
  const s = new ServerSettings({ threads: 2 }, (m) => warnings.push(m));
  const gen = s.initialize(init, defaultGenerationSettings(), '/ws');
  s.noteLoad(s.loadRequest());
  return { s, gen, warnings };
}

describe('server settings', () => {
  it('starts from initializationOptions', () => {
    const { s, gen } = started({
      speculation: { mode: 'off', budget: 8 },
      backend: 'cpu',
      threads: 3,
      model: '/m/target.gguf',
      draft: null,
    });
    assert.deepEqual(gen.speculation, { mode: 'off', budget: 8, adaptive: true, tree: false });
    assert.deepEqual(s.loadRequest(), {
      model: resolve('/m/target.gguf'),
      draft: null,
      threads: 3,
      backend: 'cpu',
    });
  });

  it('uses the command line where a setting is empty', () => {
    const { s } = started({ threads: 0 });
    assert.equal(s.loadRequest().threads, 2);
    assert.equal(s.loadRequest().model, defaultModelPath());
  });

  it('does not reload for the section VS Code sends right after start', () => {
    const { s } = started();
    assert.equal(s.change(vscodeSection(), defaultGenerationSettings()).reload, false);
  });

  it('applies mode and budget without a reload, and keeps absent fields', () => {
    const { s, gen } = started();
    const r = s.change({ leapfrog: { speculation: { mode: 'ngram', budget: 4 } } }, gen);
    assert.equal(r.reload, false);
    assert.equal(r.settings.speculation.mode, 'ngram');
    assert.equal(r.settings.speculation.budget, 4);
    const r2 = s.change({ leapfrog: { speculation: { mode: 'off' } } }, r.settings);
    assert.deepEqual([r2.settings.speculation.mode, r2.settings.speculation.budget], ['off', 4]);
    assert.equal(s.loadRequest().threads, 2);
  });

  it('reloads when threads, backend, model or draft change', () => {
    const { s, gen } = started();
    let section = {};
    for (const change of [{ threads: 1 }, { backend: 'cpu' }, { model: '/m/other.gguf' }]) {
      section = { ...section, ...change }; // VS Code sends the whole section every time
      const r = s.change(vscodeSection(section), gen);
      assert.equal(r.reload, true, JSON.stringify(change));
      s.noteLoad(s.loadRequest());
    }
    assert.deepEqual(s.loadRequest(), {
      model: resolve('/m/other.gguf'),
      draft: null,
      threads: 1,
      backend: 'cpu',
    });
    const r = s.change(vscodeSection({ ...section, draftModel: '~/d.gguf' }), gen);
    assert.equal(r.reload, true);
    assert.equal(s.loadRequest().draft, join(homedir(), 'd.gguf'));
  });

  it('expands ${workspaceFolder} and keeps a model chosen by leapfrog/loadModel', () => {
    const { s, gen } = started();
    s.change(vscodeSection({ model: '${workspaceFolder}/m.gguf' }), gen);
    assert.equal(s.loadRequest().model, resolve('/ws/m.gguf'));
    s.chooseModel('/m/picked.gguf', null);
    s.noteLoad(s.loadRequest());
    // An unrelated change (the whole section comes along) does not undo the choice.
    const r = s.change(
      vscodeSection({ model: '${workspaceFolder}/m.gguf', completion: { debounceMs: 90 } }),
      gen,
    );
    assert.equal(r.reload, false);
    assert.equal(s.loadRequest().model, resolve('/m/picked.gguf'));
  });

  it('ignores values it does not know, with a warning', () => {
    const { s, gen, warnings } = started();
    const r = s.change(
      vscodeSection({ speculation: { mode: 'fast', budget: 99 }, threads: -1 }),
      gen,
    );
    assert.equal(r.settings.speculation.mode, 'auto');
    assert.equal(r.settings.speculation.budget, MAX_DRAFT_BUDGET);
    assert.equal(s.loadRequest().threads, 2);
    assert.equal(warnings.length, 2);
    assert.equal(s.change(null, gen).settings, gen);
  });
});
