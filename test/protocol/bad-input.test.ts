// Bad input gets errors, never a crash: malformed JSON-RPC, unknown methods, out-of-range
// positions, unknown documents, params of the wrong shape.
import { strict as assert } from 'node:assert';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import { ErrorCodes, ResponseError } from 'vscode-jsonrpc/node';
import {
  delay,
  fileUri,
  settledStatus,
  skipReason,
  startSidecar,
  status,
  type Sidecar,
} from './sidecar';

const isCode = (code: number) => (e: unknown) => e instanceof ResponseError && e.code === code;

describe('protocol: bad input', function () {
  this.timeout(120_000);
  let s: Sidecar;
  const uri = fileUri(join(tmpdir(), 'bad-input.ts'));

  before(async function () {
    const why = skipReason();
    if (why) {
      console.log(`    SKIP protocol suite: ${why}`);
      this.skip();
    }
    s = await startSidecar();
    assert.equal((await settledStatus(s)).state, 'ready', s.stderr());
    await s.conn.sendNotification('textDocument/didOpen', {
      textDocument: { uri, languageId: 'typescript', version: 1, text: 'const a = 1;\nconst b = ' },
    });
  });

  after(async () => {
    await s?.stop();
  });

  it('answers a body that is not JSON with a parse error and keeps serving', async () => {
    const body = '{"jsonrpc": "2.0", "id": 99, "method": ';
    s.child.stdin.write(`Content-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`);
    for (let i = 0; i < 100 && !s.clientErrors.some((e) => e.includes('-32700')); i++)
      await delay(10);
    assert.ok(
      s.clientErrors.some((e) => e.includes('-32700')),
      `client saw: ${s.clientErrors.join('\n')}`,
    );
    assert.equal((await status(s)).state, 'ready');
  });

  it('survives a JSON body that is not a JSON-RPC message', async () => {
    const body = '{"hello": "world"}';
    s.child.stdin.write(`Content-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`);
    assert.equal((await status(s)).state, 'ready');
  });

  it('answers unknown methods with MethodNotFound', async () => {
    await assert.rejects(
      s.conn.sendRequest('leapfrog/doesNotExist', {}),
      isCode(ErrorCodes.MethodNotFound),
    );
    await assert.rejects(
      s.conn.sendRequest('textDocument/hover', {
        textDocument: { uri },
        position: { line: 0, character: 0 },
      }),
      isCode(ErrorCodes.MethodNotFound),
    );
    await s.conn.sendNotification('leapfrog/unknownNotification', { x: 1 });
    assert.equal((await status(s)).state, 'ready');
  });

  it('answers out-of-range positions, unknown documents and bad params with InvalidParams', async () => {
    const ask = (params: unknown) => s.conn.sendRequest('textDocument/inlineCompletion', params);
    await assert.rejects(
      ask({ textDocument: { uri }, position: { line: 50, character: 0 } }),
      isCode(ErrorCodes.InvalidParams),
    );
    await assert.rejects(
      ask({ textDocument: { uri }, position: { line: 1, character: 500 } }),
      isCode(ErrorCodes.InvalidParams),
    );
    await assert.rejects(
      ask({ textDocument: { uri }, position: { line: -1, character: 0 } }),
      isCode(ErrorCodes.InvalidParams),
    );
    await assert.rejects(
      ask({
        textDocument: { uri: 'file:///never/opened.ts' },
        position: { line: 0, character: 0 },
      }),
      isCode(ErrorCodes.InvalidParams),
    );
    await assert.rejects(ask({ textDocument: { uri } }), isCode(ErrorCodes.InvalidParams));
    await assert.rejects(
      s.conn.sendRequest('leapfrog/chat', { message: 'no id' }),
      isCode(ErrorCodes.InvalidParams),
    );
    const ok = await ask({
      textDocument: { uri },
      position: { line: 1, character: 10 },
      context: { triggerKind: 2 },
    });
    assert.ok(ok);
  });
});
