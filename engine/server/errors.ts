// Maps the engine's failures to JSON-RPC errors the client can act on.
import { ErrorCodes, LSPErrorCodes, ResponseError } from 'vscode-languageserver/node';
import { LeapfrogErrorCodes } from '../protocol';
import { NoModelError } from '../models/model-host';
import { PositionError } from '../completion/completion-service';
import { ChatError } from '../chat/chat-service';
import { log } from './log';

export function cancelledError(): ResponseError<void> {
  return new ResponseError(LSPErrorCodes.RequestCancelled, 'request cancelled');
}

export function toResponseError(err: unknown, what: string): ResponseError<void> {
  if (err instanceof ResponseError) return err;
  const message = err instanceof Error ? err.message : String(err);
  if (err instanceof PositionError) return new ResponseError(ErrorCodes.InvalidParams, message);
  if (err instanceof NoModelError) return new ResponseError(LeapfrogErrorCodes.NoModel, message);
  if (err instanceof ChatError) {
    const code =
      err.kind === 'too-long'
        ? LeapfrogErrorCodes.PromptTooLong
        : err.kind === 'busy'
          ? ErrorCodes.InvalidRequest
          : LeapfrogErrorCodes.GenerationFailed;
    return new ResponseError(code, message);
  }
  log('error', `${what} failed: ${err instanceof Error ? (err.stack ?? message) : message}`);
  return new ResponseError(LeapfrogErrorCodes.GenerationFailed, `${what} failed: ${message}`);
}

/** Throws InvalidParams unless `value` has the listed string/number fields. */
export function requireFields(
  value: unknown,
  fields: Record<string, 'string' | 'number' | 'object'>,
): void {
  if (typeof value !== 'object' || value === null) {
    throw new ResponseError(ErrorCodes.InvalidParams, 'params must be an object');
  }
  const v = value as Record<string, unknown>;
  for (const [name, type] of Object.entries(fields)) {
    if (typeof v[name] !== type || v[name] === null) {
      throw new ResponseError(ErrorCodes.InvalidParams, `params.${name} must be a ${type}`);
    }
  }
}
