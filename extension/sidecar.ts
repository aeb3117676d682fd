// Starts and supervises the sidecar (`node dist/cli.js lsp --stdio`) through
// vscode-languageclient: restarts it when it crashes (with a ceiling, so a sidecar that dies at
// once does not loop forever), and turns everything it learns into one `EngineView` that the
// status bar, the chat and the inline provider read.
import { existsSync } from 'node:fs';
import * as vscode from 'vscode';
import {
  CloseAction,
  ErrorAction,
  LanguageClient,
  State,
  type LanguageClientOptions,
  type ServerOptions,
} from 'vscode-languageclient/node';
import {
  ChatDeltaNotification,
  DidChangeStatusNotification,
  type ChatDeltaParams,
  StatusRequest,
  type LeapfrogInitializationOptions,
  type StatusResult,
} from '../engine/protocol';
import { engineSettings, type EngineSettings } from './config';
import type { Log } from './log';

export type Phase = 'starting' | 'ready' | 'busy' | 'error' | 'stopped';

/** What the rest of the extension knows about the engine at one moment. */
export interface EngineView {
  phase: Phase;
  /** Why we are in `error` (or what is happening while `starting`). */
  message?: string;
  /** The last status the sidecar reported; undefined until it has said anything. */
  engine?: StatusResult;
}

/** Extra initialization options the extension sends beyond the shared protocol type. */
type InitOptions = LeapfrogInitializationOptions & {
  backend?: string;
  speculation?: string;
  speculationBudget?: number;
};

const CRASH_WINDOW_MS = 3 * 60_000;
const MAX_CRASHES = 5;

export class Sidecar implements vscode.Disposable {
  private clientValue: LanguageClient | undefined;
  private viewValue: EngineView = { phase: 'stopped' };
  private readonly changed = new vscode.EventEmitter<EngineView>();
  private readonly clientStarted = new vscode.EventEmitter<LanguageClient>();
  private readonly chatDelta = new vscode.EventEmitter<ChatDeltaParams>();
  /** Streamed chat/explain text, from whichever client is current. */
  readonly onChatDelta = this.chatDelta.event;
  private crashes: number[] = [];
  /**
   * Set once an error notification is up; no other pops up until the engine has been ready
   * again (one failure often reports itself several ways: a missing file, then "no model").
   */
  private errorShown = false;
  private generation = 0;

  readonly onDidChange = this.changed.event;
  /** Fires each time a (re)started client is running, so listeners can re-register. */
  readonly onDidStartClient = this.clientStarted.event;

  constructor(
    private readonly extensionRoot: string,
    private readonly log: Log,
  ) {}

  get view(): EngineView {
    return this.viewValue;
  }

  /** The running client, or undefined while none is usable. */
  get client(): LanguageClient | undefined {
    const c = this.clientValue;
    return c && c.state === State.Running ? c : undefined;
  }

  get bundledModel(): string {
    return `${this.extensionRoot}/models/leapfrog-coder.gguf`;
  }

  private set(view: EngineView): void {
    this.viewValue = view;
    this.changed.fire(view);
  }

  /** One clear notification per distinct cause; the status bar carries the state after that. */
  private notifyOnce(message: string, ...actions: string[]): void {
    if (this.errorShown) return;
    this.errorShown = true;
    void vscode.window.showErrorMessage(`Leapfrog: ${message}`, ...actions).then((pick) => {
      if (pick === 'Choose Model…') void vscode.commands.executeCommand('leapfrog.chooseModel');
      else if (pick === 'Show Log') void vscode.commands.executeCommand('leapfrog.showLog');
      else if (pick === 'Open Settings')
        void vscode.commands.executeCommand('workbench.action.openSettings', 'leapfrog.');
    });
  }

  /** Checks what we can before spawning, so a bad path is one message, not a crash loop. */
  private preflight(s: EngineSettings): string | undefined {
    const cli = `${this.extensionRoot}/dist/cli.js`;
    if (!existsSync(cli))
      return `the engine is not built (${cli} is missing); run \`npm run build\``;
    const model = s.model || this.bundledModel;
    if (!existsSync(model)) {
      return s.model
        ? `model file not found: ${s.model}`
        : `the bundled model is missing (${model})`;
    }
    if (
      s.draftModel &&
      s.draftModel !== 'self' && // a lower-bit copy of the model, written by the engine
      s.speculation !== 'off' &&
      s.speculation !== 'ngram' &&
      !existsSync(s.draftModel)
    )
      return `draft model file not found: ${s.draftModel}`;
    return undefined;
  }

  private serverArgs(s: EngineSettings): string[] {
    const args = [`${this.extensionRoot}/dist/cli.js`, 'lsp', '--stdio'];
    if (s.model) args.push('--model', s.model);
    const draftWanted = s.speculation === 'auto' || s.speculation === 'draft';
    if (s.draftModel && draftWanted) args.push('--draft', s.draftModel);
    if (s.threads > 0) args.push('--threads', String(s.threads));
    return args;
  }

  async start(): Promise<void> {
    const gen = ++this.generation;
    const s = engineSettings();
    const problem = this.preflight(s);
    if (problem) {
      this.log.error(problem);
      this.set({ phase: 'error', message: problem });
      this.notifyOnce(problem, 'Choose Model…', 'Open Settings');
      return;
    }
    this.set({ phase: 'starting', message: 'starting the engine' });
    const args = this.serverArgs(s);
    this.log.info(`starting sidecar: ${process.execPath} ${args.join(' ')}`);
    const serverOptions: ServerOptions = {
      // VS Code's own Node runs the sidecar; in desktop VS Code that is Electron, which
      // behaves as plain Node with ELECTRON_RUN_AS_NODE. The native addon loads there.
      command: process.execPath,
      args,
      options: { env: { ...process.env, ELECTRON_RUN_AS_NODE: '1' }, cwd: this.extensionRoot },
    };
    const init: InitOptions = {
      model: s.model || undefined,
      draft:
        s.speculation === 'off' || s.speculation === 'ngram' ? null : s.draftModel || undefined,
      threads: s.threads > 0 ? s.threads : undefined,
      backend: s.backend,
      speculation: s.speculation,
      speculationBudget: s.speculationBudget,
    };
    const clientOptions: LanguageClientOptions = {
      documentSelector: [{ scheme: 'file' }, { scheme: 'untitled' }],
      outputChannel: this.log.forClient,
      initializationOptions: init,
      // We report crashes ourselves (status bar + one notification), never the client's pop-ups.
      revealOutputChannelOn: 4 /* RevealOutputChannelOn.Never */,
      connectionOptions: { maxRestartCount: MAX_CRASHES },
      errorHandler: {
        error: () => ({ action: ErrorAction.Continue, handled: true }),
        closed: () => this.onClosed(gen),
      },
      middleware: {
        // The provider in inline/provider.ts sends textDocument/inlineCompletion itself
        // (debounce, cache, cancellation); the client's own provider must stay silent.
        provideInlineCompletionItems: () => undefined,
      },
    };
    const client = new LanguageClient('leapfrog', 'Leapfrog engine', serverOptions, clientOptions);
    this.clientValue = client;
    // Registered once per client: the handler survives the client's own restarts.
    client.onNotification(DidChangeStatusNotification, (st) => {
      if (gen === this.generation) this.onStatus(st);
    });
    client.onNotification(ChatDeltaNotification, (p) => {
      if (gen === this.generation) this.chatDelta.fire(p);
    });
    client.onDidChangeState((e) => {
      if (gen !== this.generation) return;
      if (e.newState === State.Running) void this.onRunning(client);
      else if (e.newState === State.Starting && this.view.phase !== 'starting')
        this.set({ phase: 'starting', message: 'starting the engine' });
    });
    try {
      await client.start();
    } catch (e) {
      if (gen !== this.generation) return;
      const msg = `the engine failed to start: ${(e as Error).message}`;
      this.log.error(msg);
      this.set({ phase: 'error', message: msg });
      this.notifyOnce(msg, 'Show Log');
    }
  }

  private async onRunning(client: LanguageClient): Promise<void> {
    this.clientStarted.fire(client);
    try {
      const st = await client.sendRequest(StatusRequest, undefined);
      this.onStatus(st);
    } catch (e) {
      this.log.warn(`status request failed: ${(e as Error).message}`);
      this.set({ phase: 'ready' });
    }
  }

  private onStatus(st: StatusResult): void {
    const phase: Phase =
      st.state === 'loading' ? 'starting' : st.state === 'error' ? 'error' : st.state;
    if (phase === 'ready') this.errorShown = false;
    this.set({ phase, message: st.message, engine: st });
    if (st.state === 'error' && st.message)
      this.notifyOnce(st.message, 'Choose Model…', 'Show Log');
  }

  private onClosed(gen: number): { action: CloseAction; handled: boolean } {
    if (gen !== this.generation) return { action: CloseAction.DoNotRestart, handled: true };
    const now = Date.now();
    this.crashes = this.crashes.filter((t) => now - t < CRASH_WINDOW_MS);
    this.crashes.push(now);
    if (this.crashes.length > MAX_CRASHES) {
      const msg = `the engine stopped ${this.crashes.length} times in 3 minutes; not restarting it`;
      this.log.error(msg);
      this.set({ phase: 'error', message: msg });
      this.notifyOnce(msg, 'Show Log');
      return { action: CloseAction.DoNotRestart, handled: true };
    }
    this.log.warn('the engine stopped; restarting it');
    this.set({ phase: 'starting', message: 'the engine stopped; restarting it' });
    return { action: CloseAction.Restart, handled: true };
  }

  /** Stops the current sidecar (if any) and starts a fresh one with the current settings. */
  async restart(): Promise<void> {
    await this.stop();
    this.crashes = [];
    this.errorShown = false;
    await this.start();
  }

  async stop(): Promise<void> {
    this.generation++;
    const c = this.clientValue;
    this.clientValue = undefined;
    this.set({ phase: 'stopped' });
    if (c) {
      try {
        await c.stop(2000);
      } catch {
        // Already dead: nothing to stop.
      }
    }
  }

  dispose(): void {
    void this.stop();
    this.changed.dispose();
    this.clientStarted.dispose();
    this.chatDelta.dispose();
  }
}
