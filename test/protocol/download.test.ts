// `leapfrog/downloadModel` over the real sidecar, against a real HTTP server on loopback
// (test/unit/download-server.ts): progress notifications for the download's id, the file in
// place with its sha256, and each failure as the error code the extension acts on — 404,
// an existing file (DownloadFileExists with its path), a cancel that keeps the .part for
// the resume that follows, bad params.
import { strict as assert } from 'node:assert';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CancellationTokenSource } from 'vscode-jsonrpc/node';
import {
  DownloadModelRequest,
  DownloadProgressNotification,
  LeapfrogErrorCodes,
  type DownloadProgressParams,
} from '../../engine/protocol';
import { startFileServer, type FileServer } from '../unit/download-server';
import { skipReason, startSidecar, type Sidecar } from './sidecar';

interface RpcError {
  code: number;
  message: string;
  data?: { kind?: string; path?: string };
}

async function rpcError(p: Promise<unknown>): Promise<RpcError> {
  try {
    await p;
  } catch (err) {
    return err as RpcError;
  }
  assert.fail('expected an error');
}

describe('protocol: leapfrog/downloadModel', function () {
  this.timeout(60_000);
  let s: Sidecar;
  let server: FileServer;
  let folder: string;
  const progress: DownloadProgressParams[] = [];

  before(async function () {
    const why = skipReason();
    if (why) {
      console.log(`    SKIP protocol suite: ${why}`);
      this.skip();
    }
    server = await startFileServer();
    s = await startSidecar();
    s.conn.onNotification(DownloadProgressNotification, (p) => {
      progress.push(p);
    });
  });
  after(async () => {
    await s?.stop();
    await server?.close();
  });
  beforeEach(() => {
    folder = mkdtempSync(join(tmpdir(), 'leapfrog-download-rpc-'));
  });
  afterEach(() => rmSync(folder, { recursive: true, force: true }));

  it('downloads into the folder, reporting progress for its id', async () => {
    const r = await s.conn.sendRequest(DownloadModelRequest, {
      downloadId: 'd1',
      url: `${server.base}/org/repo/resolve/main/model.gguf`,
      folder: join(folder, 'made-for-it'),
    });
    assert.equal(r.path, join(folder, 'made-for-it', 'model.gguf'));
    assert.equal(r.sha256, server.sha256);
    assert.equal(r.verified, 'server');
    assert.ok(readFileSync(r.path).equals(server.body));
    const mine = progress.filter((p) => p.downloadId === 'd1');
    assert.ok(mine.length >= 2, `${mine.length} progress notifications`);
    assert.deepEqual(mine.at(-1), {
      downloadId: 'd1',
      received: server.body.length,
      total: server.body.length,
    });
  });

  it('404: DownloadFailed with a clear message', async () => {
    const e = await rpcError(
      s.conn.sendRequest(DownloadModelRequest, {
        downloadId: 'd2',
        url: `${server.base}/nothing-here.gguf`,
        folder,
      }),
    );
    assert.equal(e.code, LeapfrogErrorCodes.DownloadFailed);
    assert.equal(e.data?.kind, 'http');
    assert.match(e.message, /not found \(404/);
  });

  it('an existing file: DownloadFileExists with its path, the file untouched', async () => {
    writeFileSync(join(folder, 'model.gguf'), 'keep me');
    const e = await rpcError(
      s.conn.sendRequest(DownloadModelRequest, {
        downloadId: 'd3',
        url: `${server.base}/model.gguf`,
        folder,
      }),
    );
    assert.equal(e.code, LeapfrogErrorCodes.DownloadFileExists);
    assert.equal(e.data?.path, join(folder, 'model.gguf'));
    assert.equal(readFileSync(join(folder, 'model.gguf'), 'utf8'), 'keep me');
    const r = await s.conn.sendRequest(DownloadModelRequest, {
      downloadId: 'd3b',
      url: `${server.base}/model.gguf`,
      folder,
      overwrite: true,
    });
    assert.ok(readFileSync(r.path).equals(server.body));
  });

  it('$/cancelRequest stops it and keeps the .part; the next request resumes', async () => {
    const cts = new CancellationTokenSource();
    const seen = progress.length;
    const p = s.conn.sendRequest(
      DownloadModelRequest,
      { downloadId: 'd4', url: `${server.base}/slow.gguf`, folder },
      cts.token,
    );
    const deadline = Date.now() + 10_000;
    while (
      Date.now() < deadline &&
      !progress.slice(seen).some((x) => x.downloadId === 'd4' && x.received > 50_000)
    )
      await new Promise((r) => setTimeout(r, 10));
    cts.cancel();
    const e = await rpcError(p);
    assert.equal(e.code, -32800, e.message); // RequestCancelled
    assert.match(e.message, /cancelled|canceled/i);
    const part = join(folder, 'slow.gguf.part');
    assert.ok(existsSync(part), 'the .part is kept');
    const kept = statSync(part).size;
    assert.ok(kept > 0 && kept < server.body.length, `kept ${kept}`);
    const r = await s.conn.sendRequest(DownloadModelRequest, {
      downloadId: 'd5',
      url: `${server.base}/slow.gguf`,
      folder,
    });
    assert.equal(r.resumedFrom, kept);
    assert.equal(r.sha256, server.sha256);
  });

  it('bad params: InvalidParams', async () => {
    for (const params of [
      { downloadId: 'd6', url: 'ftp://example.com/x.gguf', folder },
      { downloadId: 'd6', url: `${server.base}/model.gguf`, folder: 'not/absolute' },
      { downloadId: 'd6', url: `${server.base}/model.gguf`, folder, sha256: 12 },
      { downloadId: 'd6', folder },
    ]) {
      const e = await rpcError(s.conn.sendRequest(DownloadModelRequest, params as never));
      assert.equal(e.code, -32602, `${JSON.stringify(params)}: ${e.message}`);
    }
  });
});
