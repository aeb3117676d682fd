// The engine's parts wired together once, for the language server and for
// `leapfrog complete` alike: model host, scheduler, completion and chat services.
import type { GenerateStats } from '../native/addon';
import { loadAddon } from '../native/load-addon';
import { ModelHost } from '../models/model-host';
import { Scheduler } from '../scheduler/scheduler';
import { CompletionService } from '../completion/completion-service';
import { completionOptionsFromEnv } from '../completion/completion-options';
import { ChatService } from '../chat/chat-service';
import type { ChatDeltaParams } from '../protocol';
import { log } from './log';

export interface EngineCore {
  host: ModelHost;
  scheduler: Scheduler;
  completions: CompletionService;
  chat: ChatService;
  /** The last finished generation's figures (for status). */
  lastStats(): GenerateStats | undefined;
  /** Stops all work and frees the models. */
  shutdown(): Promise<void>;
}

export function createEngineCore(opts: {
  threads?: number;
  onChange?: () => void;
  sendDelta?: (d: ChatDeltaParams) => void;
}): EngineCore {
  let last: GenerateStats | undefined;
  const changed = () => opts.onChange?.();
  const finished = (s: GenerateStats) => {
    last = s;
    changed();
  };
  const scheduler = new Scheduler(changed);
  const host = new ModelHost({
    addon: loadAddon,
    threads: opts.threads,
    onChange: changed,
    drain: async () => {
      scheduler.cancelAll();
      await scheduler.idle();
    },
  });
  const completions = new CompletionService(host, scheduler, completionOptionsFromEnv(), finished);
  const chat = new ChatService(host, scheduler, opts.sendDelta ?? (() => {}), finished, (m) =>
    log('warn', m),
  );
  return {
    host,
    scheduler,
    completions,
    chat,
    lastStats: () => last,
    async shutdown() {
      chat.cancelAll();
      scheduler.cancelAll();
      await scheduler.idle();
      host.dispose();
    },
  };
}
