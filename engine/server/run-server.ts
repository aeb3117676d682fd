// The sidecar language server: LSP over stdin/stdout (what the extension starts with
// `leapfrog lsp --stdio`). The connection is built on our own reader and writer so that a
// body that is not JSON gets a JSON-RPC parse error (-32700) back instead of silence.
import {
  createConnection,
  ProposedFeatures,
  StreamMessageReader,
  StreamMessageWriter,
  TextDocuments,
  TextDocumentSyncKind,
  type InitializeResult,
  type WorkDoneProgressServerReporter,
} from 'vscode-languageserver/node';
import { TextDocument } from 'vscode-languageserver-textdocument';
import {
  ChatDeltaNotification,
  DidChangeStatusNotification,
  LEAPFROG_PROTOCOL_VERSION,
  type LeapfrogInitializationOptions,
} from '../protocol';
import { resolveModelPaths } from '../models/model-paths';
import { splitLines } from '../completion/context-window';
import { promptPath } from '../completion/completion-service';
import { createEngineCore } from './engine-core';
import { fsPathOf, handleInlineCompletion } from './inline-completion-handler';
import { registerLeapfrogHandlers } from './leapfrog-handlers';
import { keepConsoleOffStdout, log } from './log';
import { buildStatus, StatusNotifier, type ClientCounters } from './status';

export async function runLanguageServer(opts: {
  model?: string;
  draft?: string;
  threads?: number;
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
  const counters: ClientCounters = { shown: 0, accepted: 0 };
  let notifier: StatusNotifier | undefined;
  const core = createEngineCore({
    threads: opts.threads,
    onChange: () => notifier?.changed(),
    sendDelta: (d) => void conn.sendNotification(ChatDeltaNotification, d),
  });
  notifier = new StatusNotifier(
    () => buildStatus(core, counters),
    (s) => void conn.sendNotification(DidChangeStatusNotification, s),
  );
  const documents = new TextDocuments(TextDocument);
  let init: LeapfrogInitializationOptions = {};
  let clientShowsProgress = false;

  conn.onInitialize((params): InitializeResult => {
    init = (params.initializationOptions ?? {}) as LeapfrogInitializationOptions;
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
    void loadInitialModel();
  });

  async function loadInitialModel(): Promise<void> {
    const paths = resolveModelPaths({
      model: typeof init.model === 'string' && init.model ? init.model : opts.model,
      draft: init.draft !== undefined ? init.draft : opts.draft,
    });
    // Start loading before the progress token round trip, so status says 'loading' at once.
    let progress: WorkDoneProgressServerReporter | undefined;
    const loading = core.host.load(paths, (message, percent) => progress?.report(percent, message));
    if (clientShowsProgress) {
      progress = await conn.window.createWorkDoneProgress().catch(() => undefined);
      progress?.begin('Leapfrog: loading model', 0, paths.model, false);
    }
    try {
      const engine = await loading;
      log(
        'info',
        `loaded ${engine.paths.model} (${engine.info.architecture}, FIM: ${engine.fim.family}) in ${engine.loadMs} ms`,
      );
    } catch (err) {
      // The server keeps running: the client sees the error in status and may load another model.
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
    core.completions.ring.forget(document.uri);
    core.completions.typedAhead.forget(document.uri);
  });
  documents.listen(conn);

  conn.languages.inlineCompletion.on((params, token) =>
    handleInlineCompletion(core, documents, params, token),
  );
  registerLeapfrogHandlers(conn, core, counters);

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
