// The "Leapfrog" Output channel. Its language id `leapfrog-log` is coloured by
// syntaxes/leapfrog-log.tmLanguage.json; the sidecar's stderr is piped into the same channel
// by vscode-languageclient, so both sides of the story read as one log.
import * as vscode from 'vscode';

export class Log implements vscode.Disposable {
  readonly channel: vscode.OutputChannel;

  /**
   * vscode-languageclient wants a LogOutputChannel, whose own 'log' language would hide our
   * grammar; this adapter writes the client's lines (and the sidecar's stderr) into our channel.
   */
  readonly forClient: vscode.LogOutputChannel;

  constructor() {
    this.channel = vscode.window.createOutputChannel('Leapfrog', 'leapfrog-log');
    const ch = this.channel;
    const levelChanged = new vscode.EventEmitter<vscode.LogLevel>();
    const fmt = (m: string | Error, args: unknown[]) =>
      [
        m instanceof Error ? m.message : m,
        ...args.map((a) => (a instanceof Error ? a.message : String(a))),
      ].join(' ');
    this.forClient = {
      name: ch.name,
      logLevel: vscode.LogLevel.Info,
      onDidChangeLogLevel: levelChanged.event,
      append: (v) => ch.append(v),
      appendLine: (v) => ch.appendLine(v),
      replace: (v) => ch.replace(v),
      clear: () => ch.clear(),
      show: (a?: unknown) => ch.show(a === true),
      hide: () => ch.hide(),
      dispose: () => undefined,
      trace: () => undefined,
      debug: () => undefined,
      info: (m, ...a) => this.line('info', fmt(m, a)),
      warn: (m, ...a) => this.line('warn', fmt(m, a)),
      // The sidecar's stderr arrives here as "errors", already stamped by the engine's own
      // logger: those lines are passed through as they are.
      error: (m, ...a) => {
        const text = fmt(m, a);
        this.noteClientError(text);
        if (/^\s*\[\d{4}-\d\d-\d\d/.test(text) || /^leapfrog: /.test(text))
          ch.appendLine(text.trimEnd());
        else this.line('error', text);
      },
    };
  }

  /**
   * Why the sidecar last stopped, as far as its last words tell: how the process ended
   * ("Server process exited with signal SIGKILL.", logged by the client) and the last error
   * the engine wrote to stderr. Empty until it has stopped once.
   */
  lastExit = '';
  private lastEngineError = '';

  /** The reason of the latest stop, in one line (for the status bar and the notification). */
  stopReason(): string {
    const how = this.lastExit.replace(/^Server process /, '').replace(/\.$/, '');
    return [how, this.lastEngineError].filter(Boolean).join('; ');
  }

  private noteClientError(text: string): void {
    if (/^Server process exited with/.test(text)) {
      this.lastExit = text.trim();
      return;
    }
    // The engine's own error lines ("[time] [error] …", "leapfrog: error: …").
    const m = /\[error\]\s*(.+)$|^leapfrog: (?:error|fatal): (.+)$/m.exec(text.trim());
    if (m) this.lastEngineError = (m[1] ?? m[2] ?? '').trim().slice(0, 200);
  }

  private line(level: string, message: string): void {
    this.channel.appendLine(`[${new Date().toISOString()}] [${level}] ${message}`);
  }

  info(message: string): void {
    this.line('info', message);
  }

  warn(message: string): void {
    this.line('warn', message);
  }

  error(message: string): void {
    this.line('error', message);
  }

  show(): void {
    this.channel.show(true);
  }

  dispose(): void {
    this.channel.dispose();
  }
}
