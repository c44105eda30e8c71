/** Bad input to an account, plan or key operation; its message is shown to the operator or caller as is. */
export class AccountInputError extends Error {}

/** Another account already has this address (addresses compare without regard to case). */
export class EmailTakenError extends AccountInputError {
  constructor(email: string) {
    super(`an account with email ${email} already exists`);
  }
}

/** Where each face takes its key, as its missing-key refusal names it. */
export const KEY_CARRIERS = {
  rest: 'the Authorization header',
  websocket: 'the Authorization header (or ?key=)',
  judge0: 'the X-Auth-Token header (or Authorization)',
  piston: 'the Authorization header (or the key as the path segment after /piston/)',
  jobe: 'the X-API-KEY header (or Authorization)',
} as const;

/** What a refused key is told, on every route and WebSocket alike. */
export const KEY_REFUSALS = {
  /** `carriers`: where the route takes the key. */
  missing: (carriers: string) => `${carriers} with an API key is required`,
  wrong: 'the API key is wrong',
  revoked: 'the API key has been revoked',
} as const;

/** The key was revoked after the request was authenticated; answered like any revoked key (401). */
export class RevokedKeyError extends Error {
  constructor() {
    super(KEY_REFUSALS.revoked);
  }
}
