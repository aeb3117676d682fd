// The custom `leapfrog/` requests and notifications: status, model load/switch, chat,
// explain, completion events.
import { basename } from 'node:path';
import type { CancellationToken, Connection } from 'vscode-languageserver/node';
import {
  ChatCancelRequest,
  ChatRequest,
  ChatResetRequest,
  CompletionAcceptedNotification,
  CompletionShownNotification,
  ExplainRequest,
  LeapfrogErrorCodes,
  LoadModelRequest,
  ModelsRequest,
  StatusRequest,
  type LoadModelResult,
} from '../protocol';
import { ErrorCodes, ResponseError } from 'vscode-languageserver/node';
import { explainMessage } from '../chat/explain';
import { registerDownloadHandler } from '../models/download/download-handler';
import { discoveryContext } from '../models/discovery/context';
import { discoverModels } from '../models/discovery/discover';
import { modelName } from '../models/model-host';
import type { EngineCore } from './engine-core';
import { registerLanguageModelHandlers } from './language-model-handlers';
import { requireFields, toResponseError } from './errors';
import { buildStatus, type ClientCounters } from './status';
import { log } from './log';
import { onCancel } from './on-cancel';
import type { ServerSettings } from './settings';

export function registerLeapfrogHandlers(
  conn: Connection,
  core: EngineCore,
  counters: ClientCounters,
  settings: ServerSettings,
): void {
  conn.onRequest(StatusRequest, () => buildStatus(core, counters));
  // VS Code's Language Model API (stateless chat, token counts) and Download Model….
  registerLanguageModelHandlers(conn, core);
  registerDownloadHandler(conn);

  conn.onRequest(LoadModelRequest, async (params): Promise<LoadModelResult> => {
    requireFields(params, { model: 'string' });
    if (core.remote) {
      // The endpoint generates: a local model would only hold memory.
      throw new ResponseError(
        LeapfrogErrorCodes.ModelLoadFailed,
        `completions and chat go to the endpoint ${core.remote.url}; ` +
          'clear the endpoint setting to load a local model',
      );
    }
    const progress = conn.languages.attachWorkDoneProgress(params);
    progress.begin('Leapfrog: loading model', 0, basename(params.model), false);
    try {
      // The files asked for, with the threads and backend of the current settings.
      settings.chooseModel(params.model, params.draft ?? null);
      const req = settings.loadRequest();
      settings.noteLoad(req);
      const engine = await core.host.load(req, (message, percent) =>
        progress.report(percent, message),
      );
      log(
        'info',
        `loaded ${engine.paths.model} (${engine.info.architecture}, FIM: ${engine.fim.family})`,
      );
      return {
        model: modelName(engine.info) ?? params.model,
        draft: modelName(engine.draftInfo),
        architecture: engine.info.architecture,
        nParams: engine.info.nParams,
        fimTemplate: engine.fim.family,
        loadMs: engine.loadMs,
      };
    } catch (err) {
      const message = err instanceof Error ? err.message : String(err);
      log('error', message);
      throw new ResponseError(LeapfrogErrorCodes.ModelLoadFailed, message);
    } finally {
      progress.done();
    }
  });

  // The Choose Model picker's list: read-only, headers only (engine/models/discovery/).
  conn.onRequest(ModelsRequest, async (params) => {
    const folders: unknown = params?.folders ?? [];
    if (!Array.isArray(folders) || !folders.every((f) => typeof f === 'string')) {
      throw new ResponseError(
        ErrorCodes.InvalidParams,
        'params.folders must be an array of strings',
      );
    }
    return discoverModels(discoveryContext(folders));
  });

  conn.onRequest(ChatRequest, async (params, token: CancellationToken) => {
    requireFields(params, { conversationId: 'string', message: 'string' });
    try {
      return await core.chat.turn(params, (cancel) => onCancel(token, cancel));
    } catch (err) {
      throw toResponseError(err, 'chat');
    }
  });

  conn.onRequest(ExplainRequest, async (params, token: CancellationToken) => {
    requireFields(params, {
      conversationId: 'string',
      selection: 'string',
      fileName: 'string',
      languageId: 'string',
    });
    try {
      return await core.chat.turn(
        {
          conversationId: params.conversationId,
          message: explainMessage(params),
          maxTokens: params.maxTokens,
        },
        (cancel) => onCancel(token, cancel),
      );
    } catch (err) {
      throw toResponseError(err, 'explain');
    }
  });

  conn.onRequest(ChatCancelRequest, (params) => {
    requireFields(params, { conversationId: 'string' });
    return { cancelled: core.chat.cancel(params.conversationId) };
  });

  conn.onRequest(ChatResetRequest, (params) => {
    requireFields(params, { conversationId: 'string' });
    core.chat.reset(params.conversationId);
  });

  conn.onNotification(CompletionShownNotification, () => {
    counters.shown++;
  });
  conn.onNotification(CompletionAcceptedNotification, () => {
    counters.accepted++;
  });
}
