// "Leapfrog: Download Model…": asks for a URL or a Hugging Face repository and file, and an
// optional sha256; the sidecar downloads it into Leapfrog's model folder (the
// `leapfrog.downloadFolder` setting, else the extension's global storage) while a progress
// notification shows how far it got and offers Cancel (the partial file stays, so the next
// attempt resumes). Afterwards it offers to use the model. Nothing is downloaded unasked.
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import * as vscode from 'vscode';
import { ResponseError } from 'vscode-languageclient/node';
import {
  DownloadModelRequest,
  LeapfrogErrorCodes,
  type DownloadModelParams,
  type DownloadModelResult,
} from '../../engine/protocol';
import { expandPath } from '../config';
import type { Log } from '../log';
import type { Sidecar } from '../sidecar';
import { onDownloadProgress } from './progress';
import {
  checkRepoFile,
  checkSha256Input,
  formatBytes,
  huggingFaceFileUrl,
  parseModelSource,
} from './source';

const TITLE = 'Leapfrog: Download Model';
const REQUEST_CANCELLED = -32800; // LSPErrorCodes.RequestCancelled

export async function downloadModelCommand(
  context: vscode.ExtensionContext,
  sidecar: Sidecar,
  log: Log,
): Promise<void> {
  const url = await askUrl();
  if (!url) return;
  const sha = await vscode.window.showInputBox({
    title: `${TITLE} (sha256)`,
    prompt:
      'Expected sha256 of the file (optional: Hugging Face announces it, and it is checked either way)',
    placeHolder: 'leave empty to skip',
    ignoreFocusOut: true,
    validateInput: checkSha256Input,
  });
  if (sha === undefined) return;
  const folder = modelFolder(context);
  await download(context, sidecar, log, {
    downloadId: randomUUID(),
    url,
    folder,
    sha256: sha.trim() || undefined,
  });
}

async function askUrl(): Promise<string | undefined> {
  const input = await vscode.window.showInputBox({
    title: TITLE,
    prompt: 'A GGUF file’s URL, or a Hugging Face repository (org/repo)',
    placeHolder: 'https://…/model.gguf  or  Qwen/Qwen2.5-Coder-1.5B-Instruct-GGUF',
    ignoreFocusOut: true,
    validateInput: (v) => {
      const s = parseModelSource(v);
      return s.kind === 'invalid' && v.trim() !== '' ? s.why : undefined;
    },
  });
  if (input === undefined || !input.trim()) return undefined;
  const source = parseModelSource(input);
  if (source.kind === 'url') return source.url;
  if (source.kind === 'invalid') {
    void vscode.window.showErrorMessage(`Leapfrog: ${source.why}`);
    return undefined;
  }
  const file = await vscode.window.showInputBox({
    title: `${TITLE} (file in ${source.repo})`,
    prompt: `The GGUF file in https://huggingface.co/${source.repo} (see its “Files” tab)`,
    placeHolder: 'model-q4_k_m.gguf',
    ignoreFocusOut: true,
    validateInput: (v) => (v.trim() ? checkRepoFile(v) : undefined),
  });
  if (!file?.trim()) return undefined;
  return huggingFaceFileUrl(source.repo, file);
}

/** `leapfrog.downloadFolder`, else `<global storage>/models`. */
export function modelFolder(context: vscode.ExtensionContext): string {
  const set = vscode.workspace
    .getConfiguration('leapfrog')
    .get<string>('downloadFolder', '')
    .trim();
  return set ? expandPath(set) : join(context.globalStorageUri.fsPath, 'models');
}

async function download(
  context: vscode.ExtensionContext,
  sidecar: Sidecar,
  log: Log,
  params: DownloadModelParams,
): Promise<void> {
  const client = sidecar.client;
  if (!client) {
    const why = sidecar.view.message ?? sidecar.view.phase;
    void vscode.window.showErrorMessage(
      `Leapfrog: downloads run in the engine, which is not running (${why})`,
      'Show Log',
    );
    return;
  }
  const name = decodeURIComponent(new URL(params.url).pathname.split('/').pop() ?? params.url);
  log.info(`downloading ${params.url} into ${params.folder}`);
  let result: DownloadModelResult;
  try {
    result = await vscode.window.withProgress(
      {
        location: vscode.ProgressLocation.Notification,
        title: `Leapfrog: downloading ${name}`,
        cancellable: true,
      },
      async (progress, token) => {
        let shown = 0;
        const sub = onDownloadProgress(client, params.downloadId, (p) => {
          const pct = p.total ? (100 * p.received) / p.total : 0;
          const of = p.total ? ` of ${formatBytes(p.total)}` : '';
          progress.report({
            message: `${formatBytes(p.received)}${of}`,
            increment: pct > shown ? pct - shown : undefined,
          });
          shown = Math.max(shown, pct);
        });
        try {
          return await client.sendRequest(DownloadModelRequest, params, token);
        } finally {
          sub.dispose();
        }
      },
    );
  } catch (err) {
    await failed(context, sidecar, log, params, err);
    return;
  }
  const checked =
    result.verified === 'none'
      ? 'no sha256 to check it against'
      : `sha256 checked against ${result.verified === 'user' ? 'yours' : result.verified === 'both' ? 'the server’s and yours' : 'the server’s'}`;
  log.info(`downloaded ${result.path} (${result.bytes} bytes; ${checked})`);
  const pick = await vscode.window.showInformationMessage(
    `Leapfrog: downloaded ${name} (${formatBytes(result.bytes)}; ${checked}).`,
    'Use This Model',
  );
  if (pick === 'Use This Model') await useModel(context, result.path);
}

async function failed(
  context: vscode.ExtensionContext,
  sidecar: Sidecar,
  log: Log,
  params: DownloadModelParams,
  err: unknown,
): Promise<void> {
  const message = err instanceof Error ? err.message : String(err);
  log.warn(`download failed: ${message}`);
  const code = err instanceof ResponseError ? err.code : undefined;
  if (code === REQUEST_CANCELLED) {
    void vscode.window.showInformationMessage(`Leapfrog: ${message}`);
    return;
  }
  if (code === LeapfrogErrorCodes.DownloadFileExists) {
    const path = (err as ResponseError<{ path?: string }>).data?.path ?? params.folder;
    const pick = await vscode.window.showWarningMessage(
      `Leapfrog: ${path} already exists.`,
      'Use It',
      'Replace It',
    );
    if (pick === 'Use It') await useModel(context, path);
    else if (pick === 'Replace It')
      await download(context, sidecar, log, { ...params, overwrite: true });
    return;
  }
  void vscode.window.showErrorMessage(`Leapfrog: ${message}`);
}

/** What "Choose Model…" writes: the recent list and `leapfrog.model`. */
async function useModel(context: vscode.ExtensionContext, path: string): Promise<void> {
  const recent = context.globalState.get<string[]>('leapfrog.recentModels', []);
  await context.globalState.update(
    'leapfrog.recentModels',
    [path, ...recent.filter((p) => p !== path)].slice(0, 5),
  );
  // The running sidecar hears of the change and loads the model itself (sidecar.ts).
  await vscode.workspace
    .getConfiguration('leapfrog')
    .update('model', path, vscode.ConfigurationTarget.Global);
}
