// `npm start`: a real VS Code (code-server 4.100.3 in the browser) with the Leapfrog extension
// and the bundled model, offline, on 127.0.0.1. Installs code-server into .vscode-e2e/ on first
// use, opens a small sample workspace, prints the URL and stays up until Ctrl-C.
//   node scripts/start-vscode.mjs [--port N] [folder]
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { codeServerInstalled, e2eDir, installSystemPackages, root, setup } from './e2e-setup.mjs';
import { startCodeServer } from './code-server.mjs';

const argv = process.argv.slice(2);
const portAt = argv.indexOf('--port');
const port = portAt >= 0 ? Number(argv[portAt + 1]) : Number(process.env.PORT ?? 8080);
const folderArg = argv.filter((a, i) => !a.startsWith('--') && argv[i - 1] !== '--port')[0];

function fail(message) {
  console.error(`leapfrog: error: ${message}`);
  process.exit(1);
}

if (!existsSync(join(root, 'dist', 'extension.js')) || !existsSync(join(root, 'dist', 'cli.js')))
  fail('the extension is not built yet; run `npm install` (or `npm run build`) first');
if (
  !existsSync(process.env.LEAPFROG_ADDON || join(root, 'native', 'build', 'leapfrog_native.node'))
)
  fail('the native engine is not built yet; run `npm run build` first');
if (!existsSync(join(root, 'models', 'leapfrog-coder.gguf')))
  console.warn(
    'leapfrog: warning: models/leapfrog-coder.gguf is missing; set leapfrog.model to a GGUF file',
  );

const missing = installSystemPackages();
if (missing.length > 0) {
  fail(
    `code-server needs the Debian packages ${missing.join(', ')}:\n` +
      '  sudo apt-get update && sudo apt-get install -y chromium libkrb5-dev ripgrep',
  );
}
if (!codeServerInstalled()) {
  console.log('Installing code-server 4.100.3 into .vscode-e2e/ (once; about a minute)…');
  try {
    setup({ playwright: false });
  } catch (e) {
    fail(e instanceof Error ? e.message : String(e));
  }
}

/** A few files to try completions on, unless the user named a folder. */
function sampleWorkspace() {
  const ws = join(e2eDir, 'start', 'workspace');
  mkdirSync(ws, { recursive: true });
  const files = {
    'fib.py': 'def fib(n):\n    """Return the n-th Fibonacci number."""\n    ',
    'app.ts': 'export function greet(name: string): string {\n  ',
    'README.md':
      '# Leapfrog playground\n\nType in `fib.py` or `app.ts` and wait for the grey ghost text; Tab accepts it.\nThe frog icon in the activity bar opens the chat.\n',
  };
  for (const [name, text] of Object.entries(files))
    if (!existsSync(join(ws, name))) writeFileSync(join(ws, name), text);
  return ws;
}

const workspace = folderArg ? resolve(folderArg) : sampleWorkspace();
const server = await startCodeServer({ dir: join(e2eDir, 'start'), workspace, port });
console.log(
  `\nLeapfrog is running in VS Code (code-server) at:\n\n    ${server.url}?folder=${encodeURIComponent(workspace)}\n`,
);
console.log(`Log: ${server.logPath}. Press Ctrl-C to stop.`);
const stop = async () => {
  await server.stop();
  process.exit(0);
};
process.on('SIGINT', stop);
process.on('SIGTERM', stop);
server.proc.on('exit', (code) => {
  console.error(`code-server exited (${code}); see ${server.logPath}`);
  process.exit(code ?? 1);
});
