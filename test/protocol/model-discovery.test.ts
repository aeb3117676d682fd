// `leapfrog/models` through the real sidecar, as the Choose Model picker asks it: the folders
// given are searched besides the stores, drafts come paired, bad params get InvalidParams.
// The request needs no loaded model (the picker is how one gets chosen).
import { strict as assert } from 'node:assert';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ErrorCodes, ResponseError } from 'vscode-jsonrpc/node';
import { ModelsRequest } from '../../engine/protocol';
import { GGMLType } from '../fixtures/gguf-writer';
import { snapshotTree, tinyGguf, writeFile } from '../unit/model-discovery-fixtures';
import { skipReason, startSidecar, type Sidecar } from './sidecar';

describe('protocol: leapfrog/models', function () {
  this.timeout(60_000);
  const dir = mkdtempSync(join(tmpdir(), 'leapfrog-protocol-models-'));
  let s: Sidecar;

  before(async function () {
    const why = skipReason();
    if (why) {
      console.log(`    SKIP protocol suite: ${why}`);
      this.skip();
    }
    writeFile(
      join(dir, 'coder', 'target-q8.gguf'),
      tinyGguf({ hidden: 128, type: GGMLType.Q8_0 }).bytes,
    );
    writeFile(
      join(dir, 'coder', 'draft-q8.gguf'),
      tinyGguf({ hidden: 32, type: GGMLType.Q8_0 }).bytes,
    );
    writeFile(join(dir, 'broken.gguf'), Buffer.from('GGUF\x03\x00\x00\x00', 'latin1'));
    s = await startSidecar(['--model', join(dir, 'not-there.gguf')]);
  });

  after(async () => {
    await s?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('lists the folder given, with the pair, and the broken file with its reason', async () => {
    const untouched = snapshotTree(dir);
    const r = await s.conn.sendRequest(ModelsRequest, { folders: [dir] });
    const mine = r.models.filter((m) => m.path.startsWith(dir));
    assert.deepEqual(
      mine.map((m) => [m.source, m.name, m.supported, m.reason]),
      [
        [
          'folder',
          'broken',
          false,
          'truncated: the file header runs past the end of the file (offset 4, file size 8)',
        ],
        ['folder', 'coder/draft-q8', true, undefined],
        ['folder', 'coder/target-q8', true, undefined],
      ],
    );
    assert.deepEqual(
      r.pairs.filter((p) => p.target.startsWith(dir)),
      [
        {
          target: join(dir, 'coder', 'target-q8.gguf'),
          draft: join(dir, 'coder', 'draft-q8.gguf'),
        },
      ],
    );
    assert.ok(r.searched.includes(dir));
    assert.deepEqual(snapshotTree(dir), untouched);
  });

  it('works without folders, and refuses folders that are not a list of strings', async () => {
    const r = await s.conn.sendRequest(ModelsRequest, {});
    assert.ok(Array.isArray(r.models) && Array.isArray(r.pairs));
    assert.equal(r.models.filter((m) => m.path.startsWith(dir)).length, 0);
    for (const folders of ['x', [1], { a: 'b' }]) {
      await assert.rejects(
        s.conn.sendRequest(ModelsRequest, { folders } as never),
        (e: unknown) =>
          e instanceof ResponseError &&
          e.code === ErrorCodes.InvalidParams &&
          /params\.folders must be an array of strings/.test(e.message),
      );
    }
  });
});
