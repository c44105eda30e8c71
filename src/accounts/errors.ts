/** Bad input to an account, plan or key operation; its message is shown to the operator or caller as is. */
export class AccountInputError extends Error {}

/** Another account already has this address (addresses compare without regard to case). */
export class EmailTakenError extends AccountInputError {
  constructor(email: string) {
    super(`an account with email ${email} already exists`);
  }
}

/** The key was revoked after the request was authenticated; answered like any revoked key (401). */
export class RevokedKeyError extends Error {
  constructor() {
    super('the API key has been revoked');
  }
}
