/** Bad input to an account, plan or key operation; its message is shown to the operator or caller as is. */
export class AccountInputError extends Error {}
