// Activation: wires the sidecar supervisor, the status bar, ghost text, the chat sidebar and
// the commands together. Each piece lives in its own file; this one only connects them.
import * as vscode from 'vscode';
import { ChatController } from './chat/controller';
import { ChatHistory } from './chat/history';
import { CHAT_VIEW_ID, ChatViewProvider } from './chat/view';
import { downloadModelCommand, modelFolder } from './download/command';
import { EndpointKey } from './endpoint-key';
import { explainSelection } from './explain';
import { CompletionGate } from './gate';
import { ACCEPTED_COMMAND, InlineProvider } from './inline/provider';
import { registerInlineProvider } from './inline/register';
import { Responsiveness } from './responsiveness';
import { registerLanguageModelProvider } from './lm/register';
import { Log } from './log';
import { chooseModel, showStatusMenu } from './menu';
import { Sidecar } from './sidecar';
import { StatusBar } from './status-bar';

let sidecar: Sidecar | undefined;

export async function activate(context: vscode.ExtensionContext): Promise<void> {
  const log = new Log();
  const gate = new CompletionGate(context.globalState);
  const endpointKey = new EndpointKey(context.secrets);
  const engine = new Sidecar(context.extensionPath, log, () => endpointKey.current);
  sidecar = engine;
  const status = new StatusBar(gate);
  const inline = new InlineProvider(engine, gate);
  const responsiveness = new Responsiveness();
  const chat = new ChatController(engine, new ChatHistory(context.globalState));
  const chatView = new ChatViewProvider(context.extensionUri, chat);
  const render = () => status.render(engine.view);

  context.subscriptions.push(
    log,
    gate,
    engine,
    status,
    inline,
    chat,
    chatView,
    engine.onDidChange(render),
    gate.onDidChange(render),
    vscode.window.onDidChangeActiveTextEditor(render),
    registerInlineProvider(inline),
    vscode.window.registerWebviewViewProvider(CHAT_VIEW_ID, chatView, {
      // Keeps a streaming reply alive while the sidebar shows another view.
      webviewOptions: { retainContextWhenHidden: true },
    }),
    vscode.commands.registerCommand(ACCEPTED_COMMAND, (uri: string, text: string) =>
      inline.accepted(uri, text),
    ),
    vscode.commands.registerCommand('leapfrog.statusMenu', () => showStatusMenu(gate)),
    vscode.commands.registerCommand('leapfrog.chooseModel', () =>
      chooseModel(context.globalState, engine, modelFolder(context)),
    ),
    vscode.commands.registerCommand('leapfrog.downloadModel', () =>
      downloadModelCommand(context, engine, log),
    ),
    vscode.commands.registerCommand('leapfrog.showLog', () => log.show()),
    responsiveness,
    vscode.commands.registerCommand('leapfrog.reportResponsiveness', () => responsiveness.report()),
    vscode.commands.registerCommand('leapfrog.restart', () => engine.restart()),
    endpointKey,
    endpointKey.onDidChange((key) => engine.pushEndpointKey(key)),
    vscode.commands.registerCommand('leapfrog.setEndpointApiKey', () => endpointKey.prompt()),
    vscode.commands.registerCommand('leapfrog.snooze', () => gate.snooze(30)),
    vscode.commands.registerCommand('leapfrog.toggleCompletions', async () => {
      const lang = vscode.window.activeTextEditor?.document.languageId;
      await gate.setGlobal(!(lang ? gate.allows(lang) : true));
    }),
    vscode.commands.registerCommand('leapfrog.explainSelection', () => explainSelection(chat)),
    vscode.commands.registerCommand('leapfrog.chat.new', () => chat.newChat()),
    vscode.commands.registerCommand('leapfrog.chat.stop', () => chat.stop()),
    vscode.workspace.onDidChangeConfiguration((e) => {
      // Engine settings reach the running sidecar without a restart (sidecar.ts).
      if (e.affectsConfiguration('leapfrog')) engine.onSettingsChanged();
      if (e.affectsConfiguration('leapfrog.completion')) render();
    }),
  );
  // VS Code 1.104+ only; absent (one log line) on older versions.
  const languageModels = registerLanguageModelProvider(engine, log);
  if (languageModels) context.subscriptions.push(languageModels);
  render();
  log.info(`Leapfrog ${context.extension.packageJSON.version as string} activating`);
  // Not awaited: activation must not wait for the model to load.
  // The endpoint key (SecretStorage) is read first: the sidecar starts with it.
  void endpointKey.load().then(() => engine.start());
}

export async function deactivate(): Promise<void> {
  await sidecar?.stop();
}
