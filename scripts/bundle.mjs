// Bundles the TypeScript entry points with esbuild: the extension, the sidecar CLI (which
// also runs the language server) — one file each in dist/. The native addon stays a
// separate .node file that the bundle loads at run time (engine/native/load-addon.ts).
import { build } from 'esbuild';
import { existsSync } from 'node:fs';

const entries = [
  { in: 'engine/cli/main.ts', out: 'dist/cli.js' },
  { in: 'extension/main.ts', out: 'dist/extension.js' },
].filter((e) => existsSync(e.in));

await Promise.all(
  entries.map((e) =>
    build({
      entryPoints: [e.in],
      outfile: e.out,
      bundle: true,
      platform: 'node',
      target: 'node20',
      format: 'cjs',
      sourcemap: true,
      external: ['vscode', '*.node'],
      logLevel: 'warning',
    }),
  ),
);
console.log(`bundled ${entries.map((e) => e.out).join(', ')}`);
