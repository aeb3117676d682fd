// The sidecar language server: LSP over stdin/stdout (what the extension starts with
// `leapfrog lsp --stdio`). The connection is built on our own reader and writer so that a
// body that is not JSON gets a JSON-RPC parse error (-32700) back instead of silence.
import {
  createConnection,
  ProposedFeatures,
  type NotificationType,
  StreamMessageReader,
  StreamMessageWriter,
  TextDocuments,
  TextDocumentSyncKind,
  type InitializeResult,
  type WorkDoneProgressServerReporter,
} from 'vscode-languageserver/node';
import { fileURLToPath } from 'node:url';
import {
  ChatDeltaNotification,
  DidChangeStatusNotification,
  LEAPFROG_PROTOCOL_VERSION,
  CompletionGrownNotification,
  PrefetchNotification,
} from '../protocol';
import type { LoadRequest } from '../models/model-host';
import { splitLines } from '../completion/context-window';
import { promptPath } from '../completion/completion-service';
import { checkedDocuments } from './checked-documents';
import { createEngineCore } from './engine-core';
import { fsPathOf, handleInlineCompletion, handlePrefetch } from './inline-completion-handler';
import { registerLeapfrogHandlers } from './leapfrog-handlers';
import { keepConsoleOffStdout, log } from './log';
import { buildStatus, StatusNotifier, type ClientCounters } from './status';
import { ServerSettings } from './settings';

export async function runLanguageServer(opts: {
  model?: string;
  draft?: string;
  threads?: number;
  /** An OpenAI-compatible server instead of the local model (engine/remote/). */
  endpoint?: string;
  endpointModel?: string;
  apiKey?: string;
}): Promise<void> {
  keepConsoleOffStdout();
  const reader = new StreamMessageReader(process.stdin);
  const writer = new StreamMessageWriter(process.stdout);
  reader.onError((err) => {
    log('warn', `bad message from the client: ${err.message}`);
    // JSON-RPC 2.0: a body that cannot be parsed is answered with id null.
    void writer
      .write({
        jsonrpc: '2.0',
        id: null,
        error: { code: -32700, message: `Parse error: ${err.message}` },
      } as never)
      .catch(() => undefined);
  });
  const conn = createConnection(ProposedFeatures.all, reader, writer);
  // Once the client has gone (stdin closed), a chat turn or a status change still in flight
  // finishes on its own, and vscode-jsonrpc throws "Connection is closed" synchronously: a
  // stack trace in the log, and from the status notifier's setImmediate an uncaught exception.
  const notifyClient = <P>(type: NotificationType<P>, params: P): void => {
    try {
      void conn.sendNotification(type.method, params).catch(() => undefined);
    } catch {
      // nobody is listening any more
    }
  };
  const counters: ClientCounters = { shown: 0, accepted: 0 };
  let notifier: StatusNotifier | undefined;
  const core = createEngineCore({
    threads: opts.threads,
    onChange: () => notifier?.changed(),
    sendDelta: (d) => notifyClient(ChatDeltaNotification, d),
  });
  notifier = new StatusNotifier(
    () => buildStatus(core, counters),
    (s) => notifyClient(DidChangeStatusNotification, s),
  );
  const documents = new TextDocuments(checkedDocuments);
  const settings = new ServerSettings(opts, (m) => log('warn', `settings: ${m}`));
  let clientShowsProgress = false;

  conn.onInitialize((params): InitializeResult => {
    core.settings = settings.initialize(
      params.initializationOptions,
      core.settings,
      workspaceFolderOf(params),
    );
    clientShowsProgress = params.capabilities.window?.workDoneProgress === true;
    return {
      capabilities: {
        textDocumentSync: { openClose: true, change: TextDocumentSyncKind.Incremental },
        inlineCompletionProvider: true,
        experimental: { leapfrog: { protocolVersion: LEAPFROG_PROTOCOL_VERSION } },
      },
      serverInfo: { name: 'leapfrog', version: '0.1.0' },
    };
  });

  conn.onInitialized(() => {
    if (settings.endpoint()) void switchGenerator();
    else void loadModel(settings.loadRequest(), 'loading model');
  });

  // Mode and budget apply to the next request; model, draft, backend and threads reload the
  // model here, in this process (the previous one keeps serving if the load fails).
  // A change of the endpoint switches between it and the local model; while an endpoint
  // serves, model settings are only remembered (they load when it is switched off).
  conn.onDidChangeConfiguration((params) => {
    const {
      settings: next,
      reload,
      endpointChanged,
      deadlineMs,
    } = settings.change(params.settings, core.settings);
    core.settings = next;
    if (deadlineMs !== undefined) core.completions.deadlineMs = deadlineMs;
    const { mode, budget } = next.speculation;
    const reloading = reload && !core.remote && !endpointChanged;
    log('info', `settings: speculation ${mode}, budget ${budget}${reloading ? '; reloading' : ''}`);
    if (endpointChanged) void switchGenerator();
    else if (reloading) void loadModel(settings.loadRequest(), 'reloading model');
  });

  /** Goes to the endpoint the settings name, or back to the local model when there is none. */
  async function switchGenerator(): Promise<void> {
    const endpoint = settings.endpoint();
    settings.noteEndpoint(endpoint);
    if (endpoint) {
      log('info', `using the endpoint ${endpoint.url} instead of a local model`);
      await core.useEndpoint(endpoint);
      return;
    }
    const wasRemote = core.remote !== undefined;
    await core.useEndpoint(undefined);
    if (wasRemote) log('info', 'endpoint switched off: loading the local model');
    await loadModel(settings.loadRequest(), 'loading model');
  }

  async function loadModel(req: LoadRequest, title: string): Promise<void> {
    settings.noteLoad(req);
    // Start loading before the progress token round trip, so status says 'loading' at once.
    let progress: WorkDoneProgressServerReporter | undefined;
    const loading = core.host.load(req, (message, percent) => progress?.report(percent, message));
    if (clientShowsProgress) {
      progress = await conn.window.createWorkDoneProgress().catch(() => undefined);
      progress?.begin(`Leapfrog: ${title}`, 0, req.model, false);
    }
    try {
      const engine = await loading;
      log(
        'info',
        `loaded ${engine.paths.model} (${engine.info.architecture}, FIM: ${engine.fim.family}, ` +
          `${engine.threads} threads, ${core.host.backend()}) in ${engine.loadMs} ms`,
      );
      for (const w of engine.warnings ?? []) log('warn', w);
    } catch (err) {
      // The server keeps running: the client sees the error in status (`message`, or
      // `loadError` when the previous model keeps serving) and may load another model.
      log('error', err instanceof Error ? err.message : String(err));
    } finally {
      progress?.done();
    }
  }

  documents.onDidOpen(({ document }) => {
    const lines = splitLines(document.getText());
    core.completions.ring.noteActivity(document.uri, promptPath(fsPathOf(document.uri)), lines, 0);
  });
  documents.onDidClose(({ document }) => {
    core.completions.forgetDocument(document.uri);
  });
  documents.listen(conn);

  conn.languages.inlineCompletion.on((params, token) =>
    handleInlineCompletion(core, documents, params, token, (grown) => {
      void conn.sendNotification(CompletionGrownNotification, grown).catch(() => undefined);
    }),
  );
  conn.onNotification(PrefetchNotification, (params) => handlePrefetch(core, documents, params));
  registerLeapfrogHandlers(conn, core, counters, settings);

  conn.onShutdown(async () => {
    log('info', 'shutting down');
    await core.shutdown();
  });

  const closed = new Promise<void>((resolve) => {
    conn.onExit(() => resolve());
    reader.onClose(() => resolve());
  });
  conn.listen();
  log('info', `leapfrog language server started (pid ${process.pid})`);
  await closed;
  await core.shutdown();
}

/** The first workspace folder's path, for `${workspaceFolder}` in path settings. */
function workspaceFolderOf(params: {
  workspaceFolders?: { uri: string }[] | null;
  rootUri?: string | null;
}): string | undefined {
  const uri = params.workspaceFolders?.[0]?.uri ?? params.rootUri ?? undefined;
  if (!uri?.startsWith('file:')) return undefined;
  try {
    return fileURLToPath(uri);
  } catch {
    return undefined;
  }
}
