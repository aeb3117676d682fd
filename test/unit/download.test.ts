// engine/models/download against a real HTTP server on loopback (download-server.ts): a
// whole download, a resume after a cut connection, a server that ignores Range, a
// redirect as Hugging Face sends it, wrong sha256s, 404, an HTML page, a cancel and a stall
// that keep the `.part`, and an existing file that is never replaced silently.
import { strict as assert } from 'node:assert';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { downloadModel, parseContentRange } from '../../engine/models/download/download';
import { DownloadError } from '../../engine/models/download/errors';
import { shaFrom } from '../../engine/models/download/request';
import { checkSha256, downloadFileName } from '../../engine/models/download/source';
import { sha256, startFileServer, type FileServer } from './download-server';

async function rejectsWith(p: Promise<unknown>, kind: string, message: RegExp): Promise<Error> {
  try {
    await p;
  } catch (err) {
    assert.ok(err instanceof DownloadError, `a DownloadError, got ${String(err)}`);
    assert.equal(err.kind, kind, err.message);
    assert.match(err.message, message);
    return err;
  }
  assert.fail(`expected a ${kind} error`);
}

describe('model download (engine/models/download) against loopback HTTP', function () {
  this.timeout(30_000);
  let server: FileServer;
  let folder: string;

  before(async () => {
    server = await startFileServer();
  });
  after(async () => {
    await server.close();
  });
  beforeEach(() => {
    folder = mkdtempSync(join(tmpdir(), 'leapfrog-download-'));
    server.requests.length = 0;
    server.cutAt = Math.floor(server.body.length / 3);
  });
  afterEach(() => rmSync(folder, { recursive: true, force: true }));

  const dest = (name = 'model.gguf') => join(folder, name);

  it('downloads a whole file, checks it against the server sha256, renames it into place', async () => {
    const progress: [number, number | null][] = [];
    const r = await downloadModel({
      url: `${server.base}/model.gguf`,
      folder,
      onProgress: (received, total) => progress.push([received, total]),
    });
    assert.equal(r.path, dest());
    assert.equal(r.bytes, server.body.length);
    assert.equal(r.sha256, server.sha256);
    assert.equal(r.verified, 'server');
    assert.equal(r.resumedFrom, 0);
    assert.ok(readFileSync(dest()).equals(server.body));
    assert.ok(!existsSync(`${dest()}.part`), 'no .part left');
    assert.deepEqual(progress.at(-1), [server.body.length, server.body.length]);
    assert.equal(server.requests[0].range, undefined, 'a fresh download asks for no range');
  });

  it('resumes after a cut connection with Range, and the whole file has the right sha256', async () => {
    const url = `${server.base}/cut-once.gguf`;
    await rejectsWith(downloadModel({ url, folder }), 'network', /cut after \d+ of 262144 bytes/);
    const part = `${dest('cut-once.gguf')}.part`;
    assert.ok(existsSync(part), 'the .part is kept');
    const kept = statSync(part).size;
    assert.ok(kept > 0 && kept < server.body.length, `partial: ${kept}`);
    assert.ok(!existsSync(dest('cut-once.gguf')), 'nothing in place yet');

    const r = await downloadModel({ url, folder, sha256: server.sha256 });
    assert.equal(server.requests.at(-1)!.range, `bytes=${kept}-`);
    assert.equal(r.resumedFrom, kept);
    assert.equal(r.verified, 'both');
    assert.equal(sha256(readFileSync(r.path)), server.sha256);
    assert.ok(!existsSync(part));
  });

  it('starts over cleanly when the server ignores Range (200)', async () => {
    const part = `${dest('ignores-range.gguf')}.part`;
    // Left by an earlier attempt: garbage that a blind append would keep.
    writeFileSync(part, Buffer.alloc(5000, 0x55));
    const r = await downloadModel({ url: `${server.base}/ignores-range.gguf`, folder });
    assert.equal(server.requests[0].range, 'bytes=5000-', 'it asked to resume');
    assert.equal(r.resumedFrom, 0, 'but started from 0');
    assert.ok(readFileSync(r.path).equals(server.body));
    assert.equal(r.sha256, server.sha256);
  });

  it('finishes a .part that is already whole (416) without downloading it again', async () => {
    writeFileSync(`${dest()}.part`, server.body);
    const r = await downloadModel({ url: `${server.base}/model.gguf`, folder });
    assert.equal(r.sha256, server.sha256);
    assert.equal(r.resumedFrom, server.body.length);
    assert.ok(readFileSync(dest()).equals(server.body));
  });

  it('follows a Hugging Face style redirect and takes the sha256 from x-linked-etag', async () => {
    const r = await downloadModel({
      url: `${server.base}/org/repo/resolve/main/model.gguf`,
      folder,
    });
    assert.deepEqual(
      server.requests.map((q) => q.path),
      ['/org/repo/resolve/main/model.gguf', '/cdn/blob'],
    );
    assert.equal(r.path, dest(), 'named after the asked URL, not the CDN one');
    assert.equal(r.verified, 'server');
    assert.equal(r.sha256, server.sha256);
  });

  it('a wrong sha256 from the user: a clear error, and no file in place (nor a .part)', async () => {
    const wrong = 'ab'.repeat(32);
    await rejectsWith(
      downloadModel({ url: `${server.base}/no-sha.gguf`, folder, sha256: wrong }),
      'checksum',
      new RegExp(`sha256 mismatch: the file has ${server.sha256}, you gave ${wrong}`),
    );
    assert.ok(!existsSync(dest('no-sha.gguf')));
    assert.ok(!existsSync(`${dest('no-sha.gguf')}.part`));
  });

  it('a file that does not match the sha256 the server announces is refused', async () => {
    await rejectsWith(
      downloadModel({ url: `${server.base}/wrong-sha.gguf`, folder }),
      'checksum',
      /the server announced 0{64}/,
    );
    assert.ok(!existsSync(dest('wrong-sha.gguf')));
    assert.ok(!existsSync(`${dest('wrong-sha.gguf')}.part`));
  });

  it('a user sha256 that contradicts the server: refused before downloading', async () => {
    await rejectsWith(
      downloadModel({ url: `${server.base}/model.gguf`, folder, sha256: 'cd'.repeat(32) }),
      'checksum',
      /the server announces sha256 .* nothing was downloaded/,
    );
    assert.ok(!existsSync(`${dest()}.part`));
  });

  it('no sha256 anywhere: downloaded, and the result says it was not checked', async () => {
    const r = await downloadModel({ url: `${server.base}/no-sha.gguf`, folder });
    assert.equal(r.verified, 'none');
    assert.equal(r.sha256, server.sha256);
  });

  it('404: a clear error, nothing written', async () => {
    await rejectsWith(
      downloadModel({ url: `${server.base}/absent.gguf`, folder }),
      'http',
      /not found \(404 Not Found\): http:\/\/127\.0\.0\.1:\d+\/absent\.gguf/,
    );
    assert.ok(!existsSync(dest('absent.gguf')));
    assert.ok(!existsSync(`${dest('absent.gguf')}.part`));
  });

  it('an HTML page instead of a GGUF: refused, nothing kept', async () => {
    await rejectsWith(
      downloadModel({ url: `${server.base}/page.gguf`, folder }),
      'not-gguf',
      /is not a GGUF file \(it starts with "<!DOCTYPE html><"\)/,
    );
    assert.ok(!existsSync(dest('page.gguf')));
    assert.ok(!existsSync(`${dest('page.gguf')}.part`));
  });

  it('a redirect loop ends with an error', async () => {
    await rejectsWith(
      downloadModel({ url: `${server.base}/loop`, folder }),
      'http',
      /more than 10 redirects/,
    );
  });

  it('cancel mid-way keeps the .part, and the next attempt resumes from it', async () => {
    const controller = new AbortController();
    const url = `${server.base}/slow.gguf`;
    const half = server.body.length / 2;
    await rejectsWith(
      downloadModel({
        url,
        folder,
        signal: controller.signal,
        progressIntervalMs: 0,
        onProgress: (received) => received >= half && controller.abort(),
      }),
      'cancelled',
      /download cancelled after \d+ of 262144 bytes; the partial file is kept/,
    );
    const part = `${dest('slow.gguf')}.part`;
    const kept = statSync(part).size;
    assert.ok(kept >= half && kept < server.body.length, `kept ${kept}`);
    assert.ok(!existsSync(dest('slow.gguf')));
    const r = await downloadModel({ url, folder });
    assert.equal(r.resumedFrom, kept);
    assert.equal(r.sha256, server.sha256);
  });

  it('a connection that stalls counts as cut: the .part is kept', async () => {
    await rejectsWith(
      downloadModel({ url: `${server.base}/stall.gguf`, folder, stallMs: 300 }),
      'network',
      /no data for 0 s after 1000 of 262144 bytes; the partial file is kept/,
    );
    assert.equal(statSync(`${dest('stall.gguf')}.part`).size, 1000);
  });

  it('never replaces an existing file unless asked to', async () => {
    writeFileSync(dest(), 'mine');
    await rejectsWith(
      downloadModel({ url: `${server.base}/model.gguf`, folder }),
      'exists',
      /model\.gguf already exists/,
    );
    assert.equal(readFileSync(dest(), 'utf8'), 'mine');
    assert.equal(server.requests.length, 0, 'nothing was asked of the server');
    const r = await downloadModel({ url: `${server.base}/model.gguf`, folder, overwrite: true });
    assert.ok(readFileSync(r.path).equals(server.body));
  });

  it('refuses a second download of the same file while one runs', async () => {
    const first = downloadModel({ url: `${server.base}/slow.gguf`, folder });
    await rejectsWith(
      downloadModel({ url: `${server.base}/slow.gguf`, folder }),
      'busy',
      /slow\.gguf is already downloading/,
    );
    await first;
  });

  it('bad input: a clear error before anything happens', async () => {
    await rejectsWith(
      downloadModel({ url: 'file:///etc/passwd', folder }),
      'bad-input',
      /only http/,
    );
    await rejectsWith(downloadModel({ url: 'not a url', folder }), 'bad-input', /not a URL/);
    await rejectsWith(
      downloadModel({ url: `${server.base}/model.gguf`, folder, fileName: '../up.gguf' }),
      'bad-input',
      /not a plain file name/,
    );
    await rejectsWith(
      downloadModel({ url: `${server.base}/model.gguf`, folder, sha256: 'xyz' }),
      'bad-input',
      /not a sha256/,
    );
    await rejectsWith(
      downloadModel({ url: `${server.base}/model.gguf`, folder: 'relative/dir' }),
      'bad-input',
      /absolute path/,
    );
    assert.equal(server.requests.length, 0);
  });
});

describe('model download: names, checksums and headers', () => {
  it('names the file after the URL, adding .gguf when the URL has none', () => {
    const u = (s: string) => new URL(s);
    assert.equal(
      downloadFileName(u('https://h/o/r/resolve/main/a%20b.gguf?download=1')),
      'a b.gguf',
    );
    assert.equal(downloadFileName(u('https://h/files/model')), 'model.gguf');
    assert.equal(downloadFileName(u('https://h/x.gguf'), 'mine.gguf'), 'mine.gguf');
    assert.throws(() => downloadFileName(u('https://h/')), /names no file/);
    assert.throws(() => downloadFileName(u('https://h/x.gguf'), 'a/b.gguf'), /plain file name/);
    assert.throws(() => downloadFileName(u('https://h/x.gguf'), '.hidden'), /plain file name/);
  });

  it('reads a sha256 from an entity tag only when it is one', () => {
    const hex = 'a'.repeat(64);
    assert.equal(shaFrom(`"${hex}"`), hex);
    assert.equal(shaFrom(`W/"${hex.toUpperCase()}"`), hex);
    assert.equal(shaFrom('"5d41402abc4b2a76b9719d911017c592"'), undefined);
    assert.equal(shaFrom(null), undefined);
    assert.equal(checkSha256(`sha256:${hex.toUpperCase()}`), hex);
    assert.equal(checkSha256(' '), undefined);
  });

  it('parses Content-Range', () => {
    assert.deepEqual(parseContentRange('bytes 100-199/1000'), {
      start: 100,
      end: 199,
      total: 1000,
    });
    assert.deepEqual(parseContentRange('bytes */1000'), {
      start: undefined,
      end: undefined,
      total: 1000,
    });
    assert.deepEqual(parseContentRange('bytes 0-9/*'), { start: 0, end: 9, total: null });
    assert.equal(parseContentRange('items 1-2/3'), undefined);
  });
});
