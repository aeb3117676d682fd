// A missing or corrupt model gives the client a clear error; the server keeps serving and
// works once a good model is loaded.
import { strict as assert } from 'node:assert';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ResponseError } from 'vscode-jsonrpc/node';
import { LeapfrogErrorCodes, LoadModelRequest } from '../../engine/protocol';
import {
  fileUri,
  settledStatus,
  skipReason,
  startSidecar,
  status,
  testModel,
  type Sidecar,
} from './sidecar';

describe('protocol: model errors and recovery', function () {
  this.timeout(120_000);
  let s: Sidecar;
  const dir = mkdtempSync(join(tmpdir(), 'leapfrog-models-'));

  before(async function () {
    const why = skipReason();
    if (why) {
      console.log(`    SKIP protocol suite: ${why}`);
      this.skip();
    }
    s = await startSidecar(['--model', join(dir, 'missing.gguf')]);
  });

  after(async () => {
    await s?.stop();
  });

  it('reports a missing model in status and on completion requests', async () => {
    const st = await settledStatus(s);
    assert.equal(st.state, 'error');
    assert.match(st.message ?? '', /not found/);
    const uri = fileUri(join(dir, 'a.py'));
    await s.conn.sendNotification('textDocument/didOpen', {
      textDocument: { uri, languageId: 'python', version: 1, text: 'x = ' },
    });
    await assert.rejects(
      s.conn.sendRequest('textDocument/inlineCompletion', {
        textDocument: { uri },
        position: { line: 0, character: 4 },
        context: { triggerKind: 2 },
      }),
      (e: unknown) =>
        e instanceof ResponseError &&
        e.code === LeapfrogErrorCodes.NoModel &&
        /not found/.test(e.message),
    );
  });

  it('rejects a corrupt and a truncated model with a clear error', async () => {
    const corrupt = join(dir, 'corrupt.gguf');
    writeFileSync(
      corrupt,
      Buffer.concat([Buffer.from('GGUF'), Buffer.from([3, 0, 0, 0]), Buffer.alloc(200, 0xff)]),
    );
    await assert.rejects(
      s.conn.sendRequest(LoadModelRequest, { model: corrupt }),
      (e: unknown) =>
        e instanceof ResponseError &&
        e.code === LeapfrogErrorCodes.ModelLoadFailed &&
        e.message.includes(corrupt),
    );
    const notGguf = join(dir, 'readme.gguf');
    writeFileSync(notGguf, 'this is not a model, just some text that is long enough');
    await assert.rejects(
      s.conn.sendRequest(LoadModelRequest, { model: notGguf }),
      (e: unknown) => e instanceof ResponseError && /not a GGUF file/.test(e.message),
    );
    assert.equal((await status(s)).state, 'error');
  });

  it('serves once a good model is loaded', async () => {
    const r = await s.conn.sendRequest(LoadModelRequest, { model: testModel() });
    assert.ok(r.model);
    const st = await status(s);
    assert.equal(st.state, 'ready');
    assert.equal(st.openSessions, 2);
    const uri = fileUri(join(dir, 'a.py'));
    const list = await s.conn.sendRequest('textDocument/inlineCompletion', {
      textDocument: { uri },
      position: { line: 0, character: 4 },
      context: { triggerKind: 2 },
    });
    assert.ok(list && Array.isArray((list as { items: unknown[] }).items));
    // Switching to a broken model keeps the good one serving.
    await assert.rejects(
      s.conn.sendRequest(LoadModelRequest, { model: join(dir, 'missing.gguf') }),
    );
    assert.equal((await status(s)).state, 'ready');
  });
});
