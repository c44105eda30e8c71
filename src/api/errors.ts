// An error with its HTTP status, a stable machine-readable code and a message for people.
// The error middleware turns it into {"error":{"code","message"}}.

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
  }
}

/** The code used when only a status is known (an error raised outside our own ApiError). */
export const DEFAULT_CODES: Record<number, string> = {
  400: 'bad_request',
  401: 'unauthorized',
  403: 'forbidden',
  404: 'not_found',
  405: 'method_not_allowed',
  406: 'not_acceptable',
  410: 'gone',
  429: 'too_many_requests',
  500: 'internal_error',
  503: 'unavailable',
};
