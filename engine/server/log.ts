// The sidecar's log: stderr only (the extension shows it in an Output channel). stdout
// carries the protocol; one stray byte there breaks the connection.
export type LogLevel = 'info' | 'warn' | 'error' | 'debug';

export function log(level: LogLevel, message: string): void {
  process.stderr.write(`[${new Date().toISOString()}] [${level}] ${message}\n`);
}

/** Sends console.log/info/debug (which would go to stdout) to the log instead. */
export function keepConsoleOffStdout(): void {
  const toLog =
    (level: LogLevel) =>
    (...args: unknown[]) =>
      log(level, args.map((a) => (typeof a === 'string' ? a : JSON.stringify(a))).join(' '));
  console.log = toLog('info');
  console.info = toLog('info');
  console.debug = toLog('debug');
}
