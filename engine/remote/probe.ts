// Finds out what an endpoint is, with a few cheap GETs (no generation):
//   GET /v1/models    — the OpenAI model list every kind serves; `owned_by: "leapfrog"` is
//                       Leapfrog's own serve; 401/403 means a key is missing or wrong;
//   GET /api/version  — answers only on Ollama;
//   GET /props        — answers only on llama.cpp's server (its slots and context size).
// Then picks how completions are asked for (llama.cpp and Leapfrog: /infill; Ollama:
// /v1/completions with suffix; anything else, e.g. vLLM: prefix-only) and the model id: the
// one the settings name, else the first listed.
import type { EndpointCompletionMode, EndpointKind } from '../protocol';
import { EndpointError, requestJson, type RequestOptions } from './http';

export interface EndpointInfo {
  url: string;
  kind: EndpointKind;
  completion: EndpointCompletionMode;
  /** The id requests name; undefined where the server serves one model and ignores it. */
  model?: string;
  /** Every id /v1/models listed. */
  models: string[];
  /** Context the server reports (llama.cpp's n_ctx, vLLM's max_model_len, Leapfrog's meta), else a guess. */
  contextSize: number;
}

/** Used where a server does not say (Ollama's default context is 2048–4096 tokens). */
export const DEFAULT_REMOTE_CONTEXT = 4096;

export const PROBE_TIMEOUT_MS = 3000;

export interface ProbeOptions {
  apiKey?: string;
  /** The model the settings ask for. */
  model?: string;
  timeoutMs?: number;
  signal?: AbortSignal;
}

interface ModelEntry {
  id: string;
  owned_by?: string;
  /** vLLM's context. */
  max_model_len?: number;
  /** Leapfrog's serve (and llama.cpp's) say more here: `n_ctx`. */
  meta?: { n_ctx?: number };
}

export async function probeEndpoint(url: string, o: ProbeOptions = {}): Promise<EndpointInfo> {
  const req: RequestOptions = {
    apiKey: o.apiKey,
    timeoutMs: o.timeoutMs ?? PROBE_TIMEOUT_MS,
    signal: o.signal,
  };
  // Unreachable, timed out or unauthorized ends the probe here; a 404 only says "not this path".
  const list = await optional(() => requestJson(url, '/v1/models', req));
  const entries = modelEntries(list?.json);
  let kind: EndpointKind | undefined;
  let props: Record<string, unknown> | undefined;
  if (entries.some((m) => m.owned_by === 'leapfrog')) kind = 'leapfrog';
  if (!kind) {
    const version = await optional(() => requestJson(url, '/api/version', req));
    if (typeof (version?.json as { version?: unknown } | undefined)?.version === 'string')
      kind = 'ollama';
  }
  if (!kind) {
    const p = await optional(() => requestJson(url, '/props', req));
    if (isLlamaProps(p?.json)) {
      kind = 'llama.cpp';
      props = p.json;
    }
  }
  if (!kind) {
    if (!list) {
      throw new EndpointError(
        `${url} does not answer GET /v1/models: not an OpenAI-compatible server`,
        'protocol',
      );
    }
    kind = 'openai';
  }
  const models = entries.map((m) => m.id);
  let model: string | undefined;
  if (o.model) {
    // llama.cpp serves the one model it was started with, whatever a request names.
    if (kind !== 'llama.cpp' && models.length && !models.includes(o.model)) {
      throw new EndpointError(
        `model ${JSON.stringify(o.model)} is not served at ${url} (it serves ${models.join(', ')})`,
        'protocol',
      );
    }
    model = o.model;
  } else if (kind !== 'llama.cpp') {
    model = models[0];
    if (model === undefined) {
      throw new EndpointError(`${url} lists no models (GET /v1/models)`, 'protocol');
    }
  }
  const completion: EndpointCompletionMode =
    kind === 'llama.cpp' || kind === 'leapfrog'
      ? 'infill'
      : kind === 'ollama'
        ? 'suffix'
        : 'prefix';
  return {
    url,
    kind,
    completion,
    model,
    models,
    contextSize: contextSize(
      props,
      entries.find((m) => m.id === model),
    ),
  };
}

/** The request's answer, or undefined when the path is not served (404, 405, 501). */
async function optional<T>(run: () => Promise<T>): Promise<T | undefined> {
  try {
    return await run();
  } catch (err) {
    if (
      err instanceof EndpointError &&
      err.kind === 'http' &&
      [404, 405, 501].includes(err.status!)
    )
      return undefined;
    throw err;
  }
}

function modelEntries(json: unknown): ModelEntry[] {
  const data = (json as { data?: unknown } | undefined)?.data;
  if (!Array.isArray(data)) return [];
  return data.filter(
    (m): m is ModelEntry =>
      typeof m === 'object' && m !== null && typeof (m as ModelEntry).id === 'string',
  );
}

function isLlamaProps(json: unknown): json is Record<string, unknown> {
  if (typeof json !== 'object' || json === null) return false;
  const p = json as Record<string, unknown>;
  return 'default_generation_settings' in p || 'total_slots' in p;
}

function contextSize(props: Record<string, unknown> | undefined, entry?: ModelEntry): number {
  const settings = props?.default_generation_settings as { n_ctx?: unknown } | undefined;
  const candidates = [settings?.n_ctx, props?.n_ctx, entry?.max_model_len, entry?.meta?.n_ctx];
  for (const c of candidates) if (typeof c === 'number' && c > 0) return c;
  return DEFAULT_REMOTE_CONTEXT;
}
