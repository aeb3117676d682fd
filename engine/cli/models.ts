// `leapfrog models [--json] [--folder F]...`: the GGUFs found where users keep them (Ollama,
// LM Studio, the Hugging Face and llama.cpp caches, added folders), as a table or as
// `{"models": [...], "pairs": [...]}`. Reads headers only; never changes a file.
import { statSync } from 'node:fs';
import { resolve } from 'node:path';
import type { DiscoveredModel, ModelsResult } from '../protocol';
import { discoveryContext } from '../models/discovery/context';
import { discoverModels } from '../models/discovery/discover';
import { CliError, UsageError, parseArgs } from './args';

const spec = { json: { kind: 'flag' as const } };

export async function modelsCommand(argv: string[]): Promise<void> {
  const { folders, rest } = takeFolders(argv);
  const args = parseArgs(rest, spec);
  for (const f of folders) requireFolder(f);
  const result = await discoverModels(discoveryContext(folders));
  if (args.json) {
    const { models, pairs } = result;
    process.stdout.write(`${JSON.stringify({ models, pairs }, null, 2)}\n`);
    return;
  }
  process.stdout.write(table(result));
}

/** `--folder F` may repeat, which the shared parser does not allow: taken out first. */
function takeFolders(argv: string[]): { folders: string[]; rest: string[] } {
  const folders: string[] = [];
  const rest: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (arg === '--folder') {
      const value = argv[++i];
      if (value === undefined) throw new UsageError("option '--folder' needs a value");
      folders.push(value);
    } else if (arg.startsWith('--folder=')) {
      folders.push(arg.slice('--folder='.length));
    } else {
      rest.push(arg);
    }
  }
  return { folders, rest };
}

function requireFolder(folder: string): void {
  const path = resolve(folder);
  let isDir: boolean;
  try {
    isDir = statSync(path).isDirectory();
  } catch {
    throw new CliError(`${path}: folder not found`);
  }
  if (!isDir) throw new CliError(`${path}: not a folder`);
}

function table({ models, pairs, searched }: ModelsResult): string {
  if (models.length === 0) {
    return `no GGUF models found; looked in:\n${searched.map((s) => `  ${s}\n`).join('')}`;
  }
  const header = ['SOURCE', 'NAME', 'ARCH', 'PARAMS', 'QUANT', 'CTX', 'FIM', 'CHAT', 'SIZE'];
  const rows = models.map((m) => [
    m.source,
    m.name,
    m.architecture ?? '?',
    m.parameters === null ? '?' : count(m.parameters),
    m.quantization ?? '?',
    m.context === null ? '?' : String(m.context),
    m.fim ? 'yes' : 'no',
    m.chatTemplate ? 'yes' : 'no',
    bytes(m.bytes),
  ]);
  const widths = header.map((h, c) => Math.max(h.length, ...rows.map((r) => r[c].length)));
  const line = (cells: string[]) =>
    cells
      .map((cell, c) => cell.padEnd(widths[c]))
      .join('  ')
      .trimEnd();
  const out = [line(header)];
  models.forEach((m, i) => {
    out.push(line(rows[i]));
    out.push(`    ${m.path}`);
    if (!m.supported) out.push(`    unsupported: ${m.reason ?? 'unknown reason'}`);
    else if (m.draft) out.push(`    draft: ${nameOf(models, m.draft)}`);
  });
  const usable = models.filter((m) => m.supported).length;
  out.push(
    '',
    `${models.length} models, ${usable} the engine can load, ${pairs.length} with a draft`,
  );
  return `${out.join('\n')}\n`;
}

function nameOf(models: DiscoveredModel[], path: string): string {
  const m = models.find((x) => x.path === path);
  return m ? `${m.name} (${m.source})` : path;
}

/** 7.6B, 494M, 293K. */
function count(n: number): string {
  if (n >= 1e9) return `${(n / 1e9).toFixed(1)}B`;
  if (n >= 1e6) return `${(n / 1e6).toFixed(n >= 1e8 ? 0 : 1)}M`;
  if (n >= 1e3) return `${Math.round(n / 1e3)}K`;
  return String(n);
}

function bytes(n: number): string {
  if (n >= 1e9) return `${(n / 1e9).toFixed(1)} GB`;
  if (n >= 1e6) return `${(n / 1e6).toFixed(1)} MB`;
  if (n >= 1e3) return `${(n / 1e3).toFixed(1)} KB`;
  return `${n} B`;
}
