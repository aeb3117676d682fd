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
  StatusRequest,
  type LoadModelResult,
} from '../protocol';
import { ResponseError } from 'vscode-languageserver/node';
import { explainMessage } from '../chat/explain';
import { modelName } from '../models/model-host';
import type { EngineCore } from './engine-core';
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

  conn.onRequest(LoadModelRequest, async (params): Promise<LoadModelResult> => {
    requireFields(params, { model: 'string' });
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
