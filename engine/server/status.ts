// Builds `leapfrog/status` from the engine's parts, and sends `leapfrog/didChangeStatus`
// when what a client shows (state, model, backend, last speed, speculation setting) changes — coalesced to one
// notification per event-loop turn, so a typing storm does not flood the client.
import type { EngineState, StatusResult } from '../protocol';
import { modelName } from '../models/model-host';
import type { EngineCore } from './engine-core';

export interface ClientCounters {
  shown: number;
  accepted: number;
}

export function buildStatus(core: EngineCore, client: ClientCounters): StatusResult {
  const { host, scheduler, completions, chat } = core;
  const snap = scheduler.snapshot();
  const st = host.state;
  const loaded = host.current;
  const endpoint = core.remote?.status();
  let state: EngineState;
  let message: string | undefined;
  if (endpoint) {
    // The endpoint generates; the local model is not loaded.
    if (endpoint.state === 'probing') {
      state = 'loading';
      message = `probing ${endpoint.url}`;
    } else if (endpoint.state === 'down') {
      state = 'error';
      message = `endpoint ${endpoint.url} is down: ${endpoint.message ?? 'not reachable'}`;
    } else state = snap.running || chat.activeTurns > 0 ? 'busy' : 'ready';
  } else if (st.kind === 'loading') {
    state = 'loading';
    message = `loading ${st.paths.model}`;
  } else if (st.kind === 'error') {
    state = 'error';
    message = st.message;
  } else if (st.kind === 'empty') {
    // Before the first load has begun (the server is starting; settings may still change
    // which model it loads) or after shutdown: not an error to show.
    state = 'loading';
    message = 'starting';
  } else if (!loaded) {
    state = 'error';
    message = 'no model is loaded';
  } else state = snap.running ? 'busy' : 'ready';
  const modelFileChanged = endpoint ? undefined : host.fileChanged();
  // A working model whose file changed: say so where clients show the status text.
  if (modelFileChanged && (state === 'ready' || state === 'busy')) message ??= modelFileChanged;
  // Likewise what the load did without (a self-draft that could not be written).
  const warnings = endpoint ? undefined : loaded?.warnings;
  if (warnings?.length && (state === 'ready' || state === 'busy')) message ??= warnings.join('; ');
  const last = core.lastStats();
  const mem = process.memoryUsage();
  return {
    state,
    message,
    loadError: endpoint ? undefined : host.lastError,
    ...(modelFileChanged ? { modelFileChanged } : {}),
    ...(endpoint ? { endpoint } : {}),
    backend: endpoint ? 'remote' : host.backend(),
    threads: loaded?.threads ?? 0,
    model: endpoint ? (endpoint.model ?? null) : modelName(loaded?.info),
    draft: modelName(loaded?.draftInfo),
    modelPath: loaded?.paths.model ?? null,
    draftPath: loaded?.paths.draft ?? null,
    lastTokensPerSecond:
      last && last.decodeMs > 0 ? Math.round((last.generated * 1e5) / last.decodeMs) / 100 : 0,
    acceptedPerPass:
      last && last.targetPasses > 0
        ? Math.round((last.generated * 100) / last.targetPasses) / 100
        : 0,
    speculation: {
      mode: core.settings.speculation.mode,
      budget: core.settings.speculation.budget,
      drafted: core.totals.drafted,
      accepted: core.totals.accepted,
      targetPasses: core.totals.targetPasses,
      maxPassTokens: core.totals.maxPassTokens,
    },
    openSessions: host.openSessions,
    activeGenerations: snap.running ? 1 : 0,
    queuedCompletions: snap.queuedCompletions,
    queuedChats: snap.queuedChats,
    activeChats: chat.activeTurns,
    memory: { rss: mem.rss, heapUsed: mem.heapUsed, external: mem.external },
    counters: {
      completions: completions.counters.completions,
      completionsCancelled: snap.counters.cancelled,
      completionsSuperseded: snap.counters.superseded,
      typedAheadHits: completions.counters.typedAheadHits,
      completionsAtDeadline: completions.counters.answeredAtDeadline,
      prefetches: completions.counters.prefetches,
      chatTurns: chat.counters.chatTurns,
      chatPreemptions: snap.counters.preemptions,
      shown: client.shown,
      accepted: client.accepted,
    },
  };
}

/** Calls `send` at most once per event-loop turn, and only when the visible part changed. */
export class StatusNotifier {
  private scheduled = false;
  private lastKey = '';

  constructor(
    private readonly build: () => StatusResult,
    private readonly send: (s: StatusResult) => void,
  ) {}

  changed(): void {
    if (this.scheduled) return;
    this.scheduled = true;
    setImmediate(() => {
      this.scheduled = false;
      const s = this.build();
      const key = JSON.stringify([
        s.state,
        s.message,
        s.loadError,
        s.modelFileChanged,
        s.model,
        s.draft,
        s.lastTokensPerSecond,
        s.acceptedPerPass,
        s.backend,
        s.speculation.mode,
        s.speculation.budget,
        s.endpoint,
      ]);
      if (key === this.lastKey) return;
      this.lastKey = key;
      this.send(s);
    });
  }
}
