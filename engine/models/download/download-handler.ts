// `leapfrog/downloadModel` in the sidecar: runs one download when the client asks, reports
// its progress as `leapfrog/downloadProgress`, stops it on $/cancelRequest, and answers a
// failure with an error whose code and `data.kind` say what happened.
import {
  ErrorCodes,
  LSPErrorCodes,
  ResponseError,
  type Connection,
} from 'vscode-languageserver/node';
import {
  DownloadModelRequest,
  DownloadProgressNotification,
  LeapfrogErrorCodes,
  type DownloadModelResult,
} from '../../protocol';
import { requireFields } from '../../server/errors';
import { log } from '../../server/log';
import { onCancel } from '../../server/on-cancel';
import { downloadModel } from './download';
import { DownloadError } from './errors';

export function registerDownloadHandler(conn: Connection): void {
  conn.onRequest(DownloadModelRequest, async (params, token): Promise<DownloadModelResult> => {
    requireFields(params, { downloadId: 'string', url: 'string', folder: 'string' });
    for (const field of ['fileName', 'sha256'] as const) {
      if (params[field] !== undefined && typeof params[field] !== 'string') {
        throw new ResponseError(ErrorCodes.InvalidParams, `params.${field} must be a string`);
      }
    }
    const controller = new AbortController();
    const cancelled = onCancel(token, () => controller.abort());
    log('info', `download ${params.url} into ${params.folder}`);
    try {
      const result = await downloadModel({
        url: params.url,
        folder: params.folder,
        fileName: params.fileName,
        sha256: params.sha256,
        overwrite: params.overwrite === true,
        signal: controller.signal,
        hfToken: process.env.HF_TOKEN || process.env.HUGGING_FACE_HUB_TOKEN || undefined,
        onProgress: (received, total) =>
          void conn.sendNotification(DownloadProgressNotification, {
            downloadId: params.downloadId,
            received,
            total,
          }),
      });
      log(
        'info',
        `downloaded ${result.path} (${result.bytes} bytes, sha256 ${result.sha256}, ` +
          `checked: ${result.verified})`,
      );
      return result;
    } catch (err) {
      const message = err instanceof Error ? err.message : String(err);
      log('warn', `download failed: ${message}`);
      throw downloadResponseError(err);
    } finally {
      cancelled.dispose();
    }
  });
}

function downloadResponseError(err: unknown): ResponseError<unknown> {
  if (err instanceof ResponseError) return err;
  if (!(err instanceof DownloadError)) {
    const message = err instanceof Error ? err.message : String(err);
    return new ResponseError(LeapfrogErrorCodes.DownloadFailed, `download failed: ${message}`);
  }
  const data = { kind: err.kind, path: err.path };
  switch (err.kind) {
    case 'bad-input':
      return new ResponseError(ErrorCodes.InvalidParams, err.message, data);
    case 'exists':
      return new ResponseError(LeapfrogErrorCodes.DownloadFileExists, err.message, data);
    case 'cancelled':
      return new ResponseError(LSPErrorCodes.RequestCancelled, err.message, data);
    default:
      return new ResponseError(LeapfrogErrorCodes.DownloadFailed, err.message, data);
  }
}
