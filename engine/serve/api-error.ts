// Errors of the HTTP API, in OpenAI's shape — `{"error": {"message", "type", "param", "code"}}`
// — so that the official clients surface the message (and their retry logic sees the status).

export type ApiErrorType = 'invalid_request_error' | 'server_error';

export class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
    /** The request field at fault, when there is one. */
    readonly param: string | null = null,
    readonly code: string | null = null,
    readonly type: ApiErrorType = status >= 500 ? 'server_error' : 'invalid_request_error',
  ) {
    super(message);
  }

  body(): { error: { message: string; type: string; param: string | null; code: string | null } } {
    return {
      error: { message: this.message, type: this.type, param: this.param, code: this.code },
    };
  }
}

/** A 400 about one field of the request body. */
export function badField(param: string, message: string): ApiError {
  return new ApiError(400, message, param, 'invalid_value');
}

/** The prompt (with what was asked to generate) does not fit the model's context. */
export function contextExceeded(message: string, param = 'prompt'): ApiError {
  return new ApiError(400, message, param, 'context_length_exceeded');
}
