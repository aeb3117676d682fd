// The engine's parts wired together once, for the language server and for
// `leapfrog complete` alike: model host, scheduler, completion and chat services, the live
// generation settings they read at each request, and the running speculation totals.
import type { GenerateStats } from '../native/addon';
import { loadAddon } from '../native/load-addon';
import { ModelHost } from '../models/model-host';
import { Scheduler } from '../scheduler/scheduler';
import { CompletionService } from '../completion/completion-service';
import { completionOptionsFromEnv } from '../completion/completion-options';
import { ChatService } from '../chat/chat-service';
import {
  defaultGenerationSettings,
  type GenerationSettings,
} from '../generation/generation-config';
import { SpeculationTotals } from '../generation/speculation-totals';
import type { ChatDeltaParams } from '../protocol';
import { RemoteEndpoint, type EndpointConfig } from '../remote/endpoint';
import { log } from './log';

export interface EngineCore {
  host: ModelHost;
  scheduler: Scheduler;
  completions: CompletionService;
  chat: ChatService;
  /** Read by every request when it starts; replace it to change the next request. */
  settings: GenerationSettings;
  totals: SpeculationTotals;
  /** The team's server completions and chat go to instead of the local model, while set. */
  readonly remote: RemoteEndpoint | undefined;
  /**
   * Switches to an endpoint (probing it; the local model is drained and freed) or, with
   * undefined, back to local generation (the caller then loads the model).
   */
  useEndpoint(config: EndpointConfig | undefined): Promise<void>;
  /** The last finished generation's figures (for status). */
  lastStats(): GenerateStats | undefined;
  /** Stops all work and frees the models. */
  shutdown(): Promise<void>;
}

export function createEngineCore(opts: {
  threads?: number;
  settings?: GenerationSettings;
  onChange?: () => void;
  sendDelta?: (d: ChatDeltaParams) => void;
}): EngineCore {
  let last: GenerateStats | undefined;
  const changed = () => opts.onChange?.();
  const finished = (s: GenerateStats) => {
    last = s;
    changed();
  };
  const totals = new SpeculationTotals();
  const completionOptions = completionOptionsFromEnv();
  const scheduler = new Scheduler(
    changed,
    (s) => totals.add(s),
    completionOptions.chatTypingHoldMs,
  );
  const host = new ModelHost({
    addon: loadAddon,
    threads: opts.threads,
    onChange: changed,
    drain: async () => {
      scheduler.cancelAll();
      await scheduler.idle();
    },
  });
  let settings = opts.settings ?? defaultGenerationSettings();
  const current = () => settings;
  let remote: RemoteEndpoint | undefined;
  const completions = new CompletionService(
    host,
    scheduler,
    completionOptions,
    finished,
    current,
    () => remote,
  );
  const chat = new ChatService(
    host,
    scheduler,
    opts.sendDelta ?? (() => {}),
    finished,
    (m) => log('warn', m),
    current,
    () => remote,
  );
  /** Stops all work on the generator that is being replaced. */
  const drain = async () => {
    chat.cancelAll();
    scheduler.cancelAll();
    await scheduler.idle();
  };
  return {
    host,
    scheduler,
    completions,
    chat,
    totals,
    get settings() {
      return settings;
    },
    set settings(next: GenerationSettings) {
      settings = next;
      changed();
    },
    get remote() {
      return remote;
    },
    async useEndpoint(config) {
      remote?.dispose();
      remote = undefined;
      await drain();
      if (!config) return changed();
      remote = new RemoteEndpoint(config, { onChange: changed, log });
      remote.start();
      // With an endpoint the local model is not kept: it would only hold memory. A load in
      // progress finishes first (it cannot be stopped half way).
      await host.whenReady().catch(() => undefined);
      if (remote && host.current) {
        await drain();
        host.dispose();
      }
      changed();
    },
    lastStats: () => last,
    async shutdown() {
      remote?.dispose();
      await drain();
      host.dispose();
    },
  };
}
