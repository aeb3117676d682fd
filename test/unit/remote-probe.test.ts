// Probing finds out what an endpoint is from GETs alone, against servers on loopback that
// answer as llama.cpp's server, Ollama and vLLM do; unreachable, silent, key-refusing and
// non-OpenAI servers fail with a message that says so.
import { strict as assert } from 'node:assert';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { EndpointError } from '../../engine/remote/http';
import { normalizeEndpointUrl, EndpointUrlError } from '../../engine/remote/endpoint-url';
import { probeEndpoint } from '../../engine/remote/probe';
import { FakeServer, MODEL_IDS } from '../support/endpoint-servers';

async function listen(server: Server): Promise<string> {
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

describe('remote: probing an endpoint', () => {
  const servers: FakeServer[] = [];
  const plain: Server[] = [];
  afterEach(async () => {
    await Promise.all(servers.splice(0).map((s) => s.close()));
    for (const s of plain.splice(0)) {
      s.closeAllConnections();
      s.close();
    }
  });
  async function start(...args: Parameters<typeof FakeServer.start>): Promise<FakeServer> {
    const s = await FakeServer.start(...args);
    servers.push(s);
    return s;
  }

  it('llama.cpp: /props answers → infill, n_ctx from /props, no model id to send', async () => {
    const s = await start('llama.cpp');
    const info = await probeEndpoint(s.url);
    assert.deepEqual(info, {
      url: s.url,
      kind: 'llama.cpp',
      completion: 'infill',
      model: undefined,
      models: [MODEL_IDS['llama.cpp']],
      contextSize: 8192,
    });
    // llama.cpp serves its one model whatever a request names: a named model is kept as is.
    assert.equal((await probeEndpoint(s.url, { model: 'anything' })).model, 'anything');
  });

  it('Ollama: /api/version answers → suffix, the first model listed', async () => {
    const s = await start('ollama');
    const info = await probeEndpoint(s.url);
    assert.equal(info.kind, 'ollama');
    assert.equal(info.completion, 'suffix');
    assert.equal(info.model, MODEL_IDS.ollama);
    assert.equal(info.contextSize, 4096, 'Ollama does not say: the default');
  });

  it('vLLM (only the OpenAI API) → prefix-only, max_model_len as the context', async () => {
    const s = await start('vllm');
    const info = await probeEndpoint(s.url);
    assert.equal(info.kind, 'openai');
    assert.equal(info.completion, 'prefix');
    assert.equal(info.model, MODEL_IDS.vllm);
    assert.equal(info.contextSize, 32768);
  });

  it('Leapfrog serve: owned_by "leapfrog" in /v1/models → infill', async () => {
    const server = createServer((req, res) => {
      res.writeHead(req.url === '/v1/models' ? 200 : 404, { 'content-type': 'application/json' });
      res.end(
        req.url === '/v1/models'
          ? JSON.stringify({
              object: 'list',
              data: [{ id: 'leapfrog-coder', owned_by: 'leapfrog' }],
            })
          : '{"error":{"message":"not found"}}',
      );
    });
    plain.push(server);
    const info = await probeEndpoint(await listen(server));
    assert.equal(info.kind, 'leapfrog');
    assert.equal(info.completion, 'infill');
    assert.equal(info.model, 'leapfrog-coder');
  });

  it('a model the server does not list is an error naming the ones it has', async () => {
    const s = await start('ollama');
    await assert.rejects(
      probeEndpoint(s.url, { model: 'codellama:7b' }),
      new RegExp(`model "codellama:7b" is not served .*it serves ${MODEL_IDS.ollama}`),
    );
  });

  it('401: asks for a key when none was sent, says it was refused when one was', async () => {
    const s = await start('vllm', { apiKey: 'right' });
    await assert.rejects(probeEndpoint(s.url), (e: EndpointError) => {
      assert.equal(e.kind, 'unauthorized');
      assert.match(e.message, /HTTP 401: the server wants an API key/);
      return true;
    });
    await assert.rejects(
      probeEndpoint(s.url, { apiKey: 'wrong' }),
      /the server refused the API key/,
    );
    assert.equal((await probeEndpoint(s.url, { apiKey: 'right' })).kind, 'openai');
  });

  it('nothing listening: connection refused, at once', async () => {
    const server = createServer();
    const url = await listen(server);
    await new Promise<void>((r) => server.close(() => r()));
    const t0 = Date.now();
    await assert.rejects(probeEndpoint(url), (e: EndpointError) => {
      assert.equal(e.kind, 'unreachable');
      assert.match(e.message, /^connection refused \(http:\/\/127\.0\.0\.1:\d+\)$/);
      return true;
    });
    assert.ok(Date.now() - t0 < 2000);
  });

  it('a server that never answers: timed out after the probe timeout', async () => {
    const server = createServer(() => {
      // accepts the request and says nothing
    });
    plain.push(server);
    const url = await listen(server);
    const t0 = Date.now();
    await assert.rejects(probeEndpoint(url, { timeoutMs: 300 }), (e: EndpointError) => {
      assert.equal(e.kind, 'timeout');
      assert.match(e.message, /no answer from .* in time/);
      return true;
    });
    const took = Date.now() - t0;
    assert.ok(took >= 290 && took < 2000, `${took} ms`);
  });

  it('an HTTP server that is no OpenAI-compatible API says so', async () => {
    const server = createServer((_req, res) => {
      res.writeHead(404, { 'content-type': 'text/html' });
      res.end('<h1>Not Found</h1>');
    });
    plain.push(server);
    await assert.rejects(probeEndpoint(await listen(server)), /does not answer GET \/v1\/models/);
  });

  it('URLs: a trailing /v1 and slashes name the same server; other schemes and credentials are refused', () => {
    assert.equal(normalizeEndpointUrl(' http://gpu-box:8000/v1/ '), 'http://gpu-box:8000');
    assert.equal(
      normalizeEndpointUrl('https://llm.example.com/team/v1'),
      'https://llm.example.com/team',
    );
    assert.equal(normalizeEndpointUrl('http://localhost:11434'), 'http://localhost:11434');
    assert.throws(() => normalizeEndpointUrl('gpu-box:8000'), EndpointUrlError);
    assert.throws(() => normalizeEndpointUrl('ws://gpu-box'), /only http:\/\/ and https:\/\//);
    assert.throws(() => normalizeEndpointUrl('not a url'), /is not a URL/);
    assert.throws(() => normalizeEndpointUrl('http://me:key@gpu-box'), /not in the URL/);
  });
});
