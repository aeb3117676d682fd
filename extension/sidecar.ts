// Starts and supervises the sidecar (`node dist/cli.js lsp --stdio`) through
// vscode-languageclient: restarts it when it crashes (with a ceiling, so a sidecar that dies at
// once does not loop forever), and turns everything it learns into one `EngineView` that the
// status bar, the chat and the inline provider read. Settings travel as initializationOptions
// and then as didChangeConfiguration (the client's `synchronize`); a change of a `leapfrog.*`
// setting never restarts the sidecar: it applies them itself, reloading the model if needed.
import { existsSync } from 'node:fs';
import * as vscode from 'vscode';
import {
  CloseAction,
  DidChangeConfigurationNotification,
  ErrorAction,
  LanguageClient,
  State,
  type LanguageClientOptions,
  type ServerOptions,
} from 'vscode-languageclient/node';
import {
  ChatDeltaNotification,
  CompletionGrownNotification,
  DidChangeStatusNotification,
  type ChatDeltaParams,
  type CompletionGrownParams,
  StatusRequest,
  type StatusResult,
} from '../engine/protocol';
import { engineSettings, initializationOptions, type EngineSettings } from './config';
import { isEngineFailure, missingEngine, USE_ENDPOINT_ACTION } from './engine-availability';
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
  private readonly completionGrown = new vscode.EventEmitter<CompletionGrownParams>();
  /** A partial ghost-text answer's suggestion is now whole on the engine (leapfrog/completionGrown). */
  readonly onCompletionGrown = this.completionGrown.event;
  private crashes: number[] = [];
  /**
   * Set once an error notification is up; no other pops up until the engine has been ready
   * again (one failure often reports itself several ways: a missing file, then "no model").
   */
  private errorShown = false;
  /** The last message shown: the same one again (a settings change, a restart) stays quiet. */
  private lastNotice: string | undefined;
  private generation = 0;
  /** Why the current settings cannot be followed (checked on each change), if they cannot. */
  private settingsProblem: string | undefined;
  private lastStatus: StatusResult | undefined;

  readonly onDidChange = this.changed.event;
  /** Fires each time a (re)started client is running, so listeners can re-register. */
  readonly onDidStartClient = this.clientStarted.event;

  constructor(
    private readonly extensionRoot: string,
    private readonly log: Log,
    /** The endpoint's API key (SecretStorage), read whenever the sidecar starts. */
    private readonly endpointKey: () => string | undefined = () => undefined,
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
    if (this.errorShown || message === this.lastNotice) return;
    this.errorShown = true;
    this.lastNotice = message;
    void vscode.window.showErrorMessage(`Leapfrog: ${message}`, ...actions).then((pick) => {
      if (pick === 'Choose Model…') void vscode.commands.executeCommand('leapfrog.chooseModel');
      else if (pick === USE_ENDPOINT_ACTION)
        void vscode.commands.executeCommand('workbench.action.openSettings', 'leapfrog.endpoint');
      else if (pick === 'Set API Key…')
        void vscode.commands.executeCommand('leapfrog.setEndpointApiKey');
      else if (pick === 'Show Log') void vscode.commands.executeCommand('leapfrog.showLog');
      else if (pick === 'Restart Engine') void vscode.commands.executeCommand('leapfrog.restart');
      else if (pick === 'Open Settings')
        void vscode.commands.executeCommand('workbench.action.openSettings', 'leapfrog.');
    });
  }

  /** Checks what we can before spawning, so a bad path is one message, not a crash loop. */
  private preflight(s: EngineSettings): string | undefined {
    const cli = `${this.extensionRoot}/dist/cli.js`;
    if (!existsSync(cli))
      return `the engine is not built (${cli} is missing); run \`npm run build\``;
    // With an endpoint no local model is loaded: its files do not matter.
    if (s.endpoint) {
      return /^https?:\/\/[^\s/]/i.test(s.endpoint)
        ? undefined
        : `leapfrog.endpoint must be an http:// or https:// URL (got ${JSON.stringify(s.endpoint)})`;
    }
    // No engine build for this platform: said before spawning, so the sidecar never starts
    // only to fail (and no restart loop); an endpoint needs none.
    const noEngine = missingEngine(this.extensionRoot);
    if (noEngine) return noEngine;
    const model = s.model || this.bundledModel;
    if (!existsSync(model)) {
      return s.model
        ? `model file not found: ${s.model}`
        : `the bundled model is missing (${model})`;
    }
    // `self`: a lower-bit copy of the model, written by the engine.
    if (s.draftModel && s.draftModel !== 'self' && !existsSync(s.draftModel))
      return `draft model file not found: ${s.draftModel}`;
    return undefined;
  }

  async start(): Promise<void> {
    const gen = ++this.generation;
    this.settingsProblem = undefined;
    this.lastStatus = undefined;
    const s = engineSettings();
    const problem = this.preflight(s);
    if (problem) {
      this.log.error(problem);
      this.set({ phase: 'error', message: problem });
      if (missingEngine(this.extensionRoot) && !s.endpoint)
        this.notifyOnce(problem, USE_ENDPOINT_ACTION, 'Show Log');
      else this.notifyOnce(problem, 'Choose Model…', 'Open Settings');
      return;
    }
    this.set({ phase: 'starting', message: 'starting the engine' });
    // No model or engine flags: initializationOptions carry them, so that a later change of
    // a setting back to its default does not fall back to a stale command line.
    const args = [`${this.extensionRoot}/dist/cli.js`, 'lsp', '--stdio'];
    this.log.info(`starting sidecar: ${process.execPath} ${args.join(' ')}`);
    const serverOptions: ServerOptions = {
      // VS Code's own Node runs the sidecar; in desktop VS Code that is Electron, which
      // behaves as plain Node with ELECTRON_RUN_AS_NODE. The native addon loads there.
      command: process.execPath,
      args,
      options: { env: { ...process.env, ELECTRON_RUN_AS_NODE: '1' }, cwd: this.extensionRoot },
    };
    const clientOptions: LanguageClientOptions = {
      documentSelector: [{ scheme: 'file' }, { scheme: 'untitled' }],
      outputChannel: this.log.forClient,
      // A function: a restart after a crash starts from the settings of that moment.
      initializationOptions: () => initializationOptions(engineSettings(), this.endpointKey()),
      // didChangeConfiguration with `settings.leapfrog` on every change of the section.
      synchronize: { configurationSection: 'leapfrog' },
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
    client.onNotification(CompletionGrownNotification, (p) => {
      if (gen === this.generation) this.completionGrown.fire(p);
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
    this.lastStatus = st;
    // A setting the engine cannot follow (a missing file, a model that failed to load while
    // the previous one kept serving) is an error to show, though completions still work.
    const problem = this.settingsProblem ?? st.loadError;
    if (problem && st.state !== 'loading') {
      this.set({ phase: 'error', message: problem, engine: st });
      this.notifyOnce(problem, 'Choose Model…', 'Open Settings');
      return;
    }
    // The model file changed on disk while loaded: the loaded copy keeps serving (the engine
    // no longer reads the file), and a restart loads what is on disk now.
    if (st.modelFileChanged && st.state === 'ready') {
      this.set({ phase: 'ready', message: st.modelFileChanged, engine: st });
      this.notifyOnce(st.modelFileChanged, 'Restart Engine', 'Choose Model…');
      return;
    }
    const phase: Phase =
      st.state === 'loading' ? 'starting' : st.state === 'error' ? 'error' : st.state;
    if (phase === 'ready') {
      this.errorShown = false;
      this.lastNotice = undefined;
    }
    this.set({ phase, message: st.message, engine: st });
    if (st.state === 'error' && st.message) {
      // The addon is there but does not load (dlopen's reason is in the message).
      if (!st.endpoint && isEngineFailure(st.message))
        this.notifyOnce(st.message, USE_ENDPOINT_ACTION, 'Show Log');
      else if (!st.endpoint) this.notifyOnce(st.message, 'Choose Model…', 'Show Log');
      else if (/HTTP 40[13]/.test(st.endpoint.message ?? ''))
        this.notifyOnce(st.message, 'Set API Key…', 'Open Settings');
      else this.notifyOnce(st.message, 'Open Settings', 'Show Log');
    }
  }

  /** The endpoint key changed (SecretStorage): the running sidecar hears of it at once. */
  pushEndpointKey(key: string | undefined): void {
    // Empty clears it on the sidecar's side; the key is never logged.
    void this.client
      ?.sendNotification(DidChangeConfigurationNotification.type, {
        settings: { leapfrog: { endpointApiKey: key ?? '' } },
      })
      .catch((e: Error) => this.log.warn(`could not pass the endpoint key on: ${e.message}`));
  }

  private onClosed(gen: number): { action: CloseAction; handled: boolean } {
    if (gen !== this.generation) return { action: CloseAction.DoNotRestart, handled: true };
    const now = Date.now();
    this.crashes = this.crashes.filter((t) => now - t < CRASH_WINDOW_MS);
    this.crashes.push(now);
    if (this.crashes.length > MAX_CRASHES) {
      // The client logs how the process ended just after calling us: read it a moment later.
      setTimeout(() => {
        if (gen !== this.generation) return;
        const why = this.log.stopReason();
        const msg =
          `the engine stopped ${this.crashes.length} times in 3 minutes` +
          `${why ? ` (last: ${why})` : ''}; not restarting it by itself`;
        this.log.error(msg);
        this.set({ phase: 'error', message: msg });
        this.notifyOnce(msg, 'Restart Engine', 'Show Log');
      }, 200);
      this.set({ phase: 'error', message: 'the engine stopped too often' });
      return { action: CloseAction.DoNotRestart, handled: true };
    }
    this.log.warn('the engine stopped; restarting it');
    this.set({ phase: 'starting', message: 'the engine stopped; restarting it' });
    return { action: CloseAction.Restart, handled: true };
  }

  /**
   * A `leapfrog.*` setting changed. A running sidecar hears of it through the client's
   * didChangeConfiguration; only when none runs (the settings stopped it from starting, or
   * it crashed too often) is a new one started, so that fixing a path is enough.
   */
  onSettingsChanged(): void {
    if (!this.client) {
      if (this.view.phase === 'error') void this.restart();
      return;
    }
    const problem = this.preflight(engineSettings());
    this.settingsProblem = problem;
    if (problem) this.log.error(problem);
    if (this.lastStatus) this.onStatus(this.lastStatus);
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
    this.completionGrown.dispose();
  }
}
