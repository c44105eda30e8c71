import type { ColumnType, Generated, Insertable, Selectable, Updateable } from 'kysely';
import type { JudgeSettings } from '../judge/settings.js';

// Typed tables for Kysely, mirroring src/db/migrations.

type Timestamp = ColumnType<Date, Date | string | undefined, Date | string>;
type NullableTimestamp = ColumnType<Date | null, Date | string | null | undefined, Date | string | null>;
/** bigint ids come back from pg as strings; we pass them as strings too. */
type Id = ColumnType<string, string | number, string | number>;
type GeneratedId = ColumnType<string, string | number | undefined, never>;
type Json<T> = ColumnType<T, string | undefined | null, string | null>;

export interface PlansTable {
  name: string;
  monthly_limit: number;
  per_minute: number;
  pending: number;
  running: number;
  tests_per_request: number;
  /** Most sandbox time one request may ask for (migration 0013). */
  sandbox_seconds_per_request: number;
  /** Test data of stored problems per account (migration 0050); int8, read as a string. */
  problem_storage_bytes: ColumnType<string, string | number | undefined, string | number>;
  created_at: Generated<Date>;
  updated_at: Generated<Date>;
}

export interface AccountsTable {
  id: GeneratedId;
  /** Null for an API-marketplace subscriber's account. */
  email: string | null;
  /** The marketplace's name for the subscriber (X-RapidAPI-User); null for accounts of our own. */
  marketplace_user: ColumnType<string | null, string | null | undefined, string | null>;
  plan: string;
  monthly_limit: number | null;
  per_minute: number | null;
  pending: number | null;
  running: number | null;
  tests_per_request: number | null;
  sandbox_seconds_per_request: number | null;
  problem_storage_bytes: ColumnType<string | null, string | number | null | undefined, string | number | null>;
  running_now: Generated<number>;
  created_at: Generated<Date>;
  /** argon2id hash; null until a password is set (portal sign-up or a reset/invite link). */
  password_hash: string | null;
  /** Null while a portal sign-up waits for its address to be verified (SMTP configured). */
  email_verified_at: NullableTimestamp;
}

export type KeyKind = 'api' | 'widget';

export interface ApiKeysTable {
  id: GeneratedId;
  account_id: Id;
  key_hash: Buffer;
  key_prefix: string;
  app_name: string;
  redirect_url: string | null;
  kind: KeyKind;
  monthly_limit: number | null;
  /** Signs callbacks; null for widget keys, which send none. */
  signing_secret: string | null;
  /** Browser origins a widget key may be used from (scheme://host[:port]); empty for API keys. */
  allowed_origins: ColumnType<string[], string[] | undefined, string[]>;
  /** A student's key: its account's problems' runs reach it under their feedback (migration 0110). */
  student: Generated<boolean>;
  created_at: Generated<Date>;
  revoked_at: NullableTimestamp;
}

export interface AccountUsageTable {
  account_id: Id;
  month: string;
  submissions: Generated<number>;
}

export interface KeyUsageTable {
  key_id: Id;
  month: string;
  submissions: Generated<number>;
}

export type SubmissionState = 'queued' | 'running' | 'finished' | 'failed';
export type SubmissionMode = 'async' | 'sync' | 'ws' | 'piston' | 'judge0' | 'jobe' | 'batch';

/** A file of the program other than its main one (content base64: any bytes). */
export interface RunFile {
  /** A relative path in the workspace (src/program/paths.ts). */
  name: string;
  content_base64: string;
}

/** One stage's limits, below RUN_LIMITS (the API checks or clamps them). */
export interface StageLimits {
  timeout_ms?: number;
  memory_bytes?: number;
  /** CPU time of the stage, all its processes together (a request's limits.time). */
  cpu_ms?: number;
}

/**
 * The program beyond its main file's text (`code`) and what a run asks for beyond code
 * and input (migration 0010; jsonb, so new members need no migration). Read into stage
 * files and argv by src/program/plan.ts.
 */
export interface RunOptions {
  /** The program's other files, written beside the main one in both stages. */
  files?: RunFile[];
  /** The main file's name (a request's files); absent: the recipe's source name (code). */
  main?: string;
  /** Passed to the program after its run command. */
  args?: string[];
  /** Added to the compile stage where its recipe says ({options}); checked against its allowed forms. */
  compiler_options?: string[];
  compile?: StageLimits;
  run?: StageLimits;
  /** Bring back the files the program writes under /box/out/ with each run's result. */
  return_files?: boolean;
  /** The caller types input while the program runs (WebSocket runs; src/queue/input-channel.ts). */
  interactive?: boolean;
  /** A judged run: its checker, interactor, stop_on_failure, or the stored problem it runs (src/judge/settings.ts). */
  judge?: JudgeSettings;
  /** Check the program with its recipe's syntax check before it runs, as in a judged run (the Jobe route: Jobe compiles Python 3 and PHP first). */
  syntax_check?: boolean;
  /** A run of a session (src/sessions): it starts in the session's workspace and leaves its files there. */
  session?: SessionRunOptions;
}

/** What a session's run is: its code, a file of its workspace, or a command (an argv, never a shell string) run in it. */
export interface SessionRunOptions {
  id: string;
  run: 'code' | 'file' | 'command' | 'cell';
  /** The file run (run 'file'). */
  file?: string;
  /** The argv run in /box (run 'command', and a kernel's cell: its driver); its first element is looked up in the image's PATH. */
  command?: string[];
}

/** A per-submission callback target that replaces the key's redirect URL. */
export interface CallbackTarget {
  url: string;
  method: 'POST' | 'PUT';
  /** How the sender renders the body: 'runbox' (the result as is) or a compatible API's shape. */
  format: string;
}

/** A test of a multi-test request as stored: its input, and for a judged run its expected output, weight and name. */
export interface TestCaseRow {
  input: string;
  expected_output?: string;
  weight?: number;
  name?: string;
}

export interface SubmissionsTable {
  id: Generated<string>;
  account_id: Id;
  key_id: Id | null;
  compiler: string;
  code: string;
  input: string | null;
  tests: Json<TestCaseRow[] | null>;
  extra_params: Json<Record<string, unknown> | null>;
  run_options: Json<RunOptions | null>;
  callback: Json<CallbackTarget | null>;
  /** What a compatible route keeps to answer in its own shape. */
  compat: Json<Record<string, unknown> | null>;
  mode: Generated<SubmissionMode>;
  priority: Generated<number>;
  state: Generated<SubmissionState>;
  units: Generated<number>;
  month: string;
  refunded: Generated<boolean>;
  attempts: Generated<number>;
  max_attempts: Generated<number>;
  run_at: Generated<Date>;
  locked_by: string | null;
  lease_expires_at: NullableTimestamp;
  created_at: Timestamp;
  started_at: NullableTimestamp;
  finished_at: NullableTimestamp;
  result: Json<unknown>;
  last_error: string | null;
  /** The caller went away: the run is stopped (migration 0008). */
  cancelled_at: NullableTimestamp;
}

export interface RunnersTable {
  id: string;
  hostname: string;
  slots: number;
  /** How many of its slots one account may hold (migration 0021); null: all of them. */
  account_slots: number | null;
  launcher: string;
  started_at: Generated<Date>;
  last_seen: Generated<Date>;
  stopped_at: NullableTimestamp;
  /** {compiler id: version} of the images this runner can run; null before it reported. */
  compilers: Json<Record<string, string> | null>;
  /** The runner's process id on its host (migration 0008); null for rows written before. */
  pid: number | null;
  /** Claims this runner made under an account share (migration 0052; src/queue/claim.ts). */
  claim_turns: Generated<string>;
}

/** Live output of WebSocket runs, for replay after a lost notification (migration 0008). */
export interface SubmissionOutputTable {
  submission_id: string;
  /** The run's attempt whose runner wrote the chunk (migration 0053); seq counts within it. */
  attempt: Generated<number>;
  seq: number;
  stream: 'stdout' | 'stderr' | null;
  data: string;
  created_at: Generated<Date>;
}

export interface SettingsTable {
  name: string;
  value: Json<unknown>;
  updated_at: Generated<Date>;
}

export type DeliveryState = 'pending' | 'delivered' | 'dead';

export interface CallbackDeliveriesTable {
  id: Generated<string>;
  submission_id: string;
  key_id: Id;
  url: string;
  method: Generated<'POST' | 'PUT'>;
  format: Generated<string>;
  payload: Json<unknown>;
  state: Generated<DeliveryState>;
  attempts: Generated<number>;
  run_at: Generated<Date>;
  locked_by: string | null;
  lease_expires_at: NullableTimestamp;
  last_status: number | null;
  last_error: string | null;
  created_at: Generated<Date>;
  updated_at: Generated<Date>;
  delivered_at: NullableTimestamp;
  /** Null for the delivery the run's end wrote; who asked for a redelivery (migration 0012). */
  redelivered_by: ColumnType<'portal' | 'operator' | null, 'portal' | 'operator' | null | undefined, 'portal' | 'operator' | null>;
}

export interface AdminKeysTable {
  id: GeneratedId;
  key_hash: Buffer;
  key_prefix: string;
  label: string;
  created_at: Generated<Date>;
  revoked_at: NullableTimestamp;
}

export interface UsageEmailsTable {
  id: GeneratedId;
  account_id: Id;
  key_id: Id | null;
  month: string;
  threshold: number;
  used: number;
  monthly_limit: number;
  to_address: string;
  attempts: Generated<number>;
  run_at: Generated<Date>;
  locked_by: string | null;
  lease_expires_at: NullableTimestamp;
  last_error: string | null;
  created_at: Generated<Date>;
  sent_at: NullableTimestamp;
  /** sent, or dead after the last attempt (migration 0009). */
  state: Generated<'pending' | 'sent' | 'dead'>;
}

export interface SyncCapacityTable {
  id: Generated<boolean>;
  checks: ColumnType<string, never, string | number>;
}

/** A new key held for the one page that shows it after the creating form's redirect. */
export interface KeyRevealsTable {
  session_id_hash: Buffer;
  key_id: Id;
  key: string | null;
  signing_secret: string | null;
  expires_at: Timestamp;
}

export interface PortalSessionsTable {
  id_hash: Buffer;
  account_id: Id;
  csrf_token: string;
  created_at: Generated<Date>;
  last_seen_at: Generated<Date>;
  expires_at: Timestamp;
}

export type TokenPurpose = 'invite' | 'reset' | 'verify';

export interface AccountTokensTable {
  token_hash: Buffer;
  purpose: TokenPurpose;
  email: string;
  account_id: Id | null;
  created_at: Generated<Date>;
  expires_at: Timestamp;
  used_at: NullableTimestamp;
}

export interface LoginAttemptsTable {
  id: GeneratedId;
  email: string;
  ip: string;
  succeeded: boolean;
  at: Generated<Date>;
}

export interface SignupAttemptsTable {
  id: GeneratedId;
  ip: string;
  at: Generated<Date>;
}

/** A problem write an account made (migration 0051), for the per-minute bound. */
export interface ProblemWritesTable {
  account_id: Id;
  at: Generated<Date>;
}

/** Content-addressed test data (migration 0050): sha-256 of the content. */
export interface TestDataTable {
  hash: Buffer;
  size: number;
  content: Buffer;
  created_at: Generated<Date>;
}

export interface ProblemsTable {
  id: Generated<string>;
  account_id: Id;
  name: string;
  /** The current version. */
  version: number;
  /** What restricted askers see of its runs (migration 0110; src/problems/feedback.ts). */
  feedback: Generated<'full' | 'samples' | 'first_failure' | 'verdict'>;
  /** Any account's key may judge against it (migration 0110). */
  public: Generated<boolean>;
  created_at: Generated<Date>;
  updated_at: Generated<Date>;
  deleted_at: NullableTimestamp;
}

export interface ProblemVersionsTable {
  problem_id: string;
  version: number;
  checker: Json<unknown>;
  interactor: Json<unknown | null>;
  limits: Json<unknown>;
  /** A Kattis package's tree of test groups (src/judge/groups.ts); null without one. */
  groups: Json<unknown | null>;
  /** What the upload said of the package (src/problems/draft.ts PackageModel); null without one. */
  package: Json<unknown | null>;
  tests: number;
  data_bytes: ColumnType<string, string | number, string | number>;
  created_at: Generated<Date>;
  superseded_at: NullableTimestamp;
  /** Its statement (migration 0121): Markdown, or a package's LaTeX source; null: none. */
  statement: ColumnType<string | null, string | null | undefined, string | null>;
  statement_format: ColumnType<'markdown' | 'latex' | null, 'markdown' | 'latex' | null | undefined, 'markdown' | 'latex' | null>;
  /** The sha-256 of the package it was uploaded from (migration 0121). */
  package_hash: ColumnType<Buffer | null, Buffer | null | undefined, Buffer | null>;
  /** Files copied over a submission before it is built, by language code (migration 0080); null: none. */
  include: Json<Record<string, RunFile[]> | null>;
  /** A submit-answer problem: a submission is its answer files (migration 0081). */
  submit_answer: ColumnType<boolean, boolean | undefined, boolean>;
  /** What the package says of its time limit (migration 0090): src/problems/time-limit.ts. */
  timing: ColumnType<unknown, string | null | undefined, string | null>;
  /** CPU seconds a verification derived from the accepted submissions; null: none yet. */
  derived_time: ColumnType<number | null, number | null | undefined, number | null>;
}

/** A package's example submission kept with its version (migration 0090). */
export interface ProblemSubmissionsTable {
  problem_id: string;
  version: number;
  ordinal: number;
  path: string;
  compiler: string | null;
  refusal: string | null;
  main: string;
  expected: Json<unknown>;
}

export interface ProblemSubmissionFilesTable {
  problem_id: string;
  version: number;
  ordinal: number;
  name: string;
  hash: Buffer;
}

/** A verification or rejudge of a problem's version (migration 0090). */
export interface ProblemChecksTable {
  id: Generated<string>;
  kind: 'verify' | 'rejudge';
  problem_id: string;
  version: number;
  account_id: Id;
  key_id: Id | null;
  state: Generated<'running' | 'done'>;
  phase: Generated<number>;
  time_limit: number | null;
  report: Json<unknown>;
  created_at: Generated<Date>;
  finished_at: NullableTimestamp;
}

export interface ProblemCheckRunsTable {
  check_id: string;
  ordinal: number;
  phase: number;
  submission_ordinal: number | null;
  previous_id: string | null;
  job_id: string | null;
  refusal: string | null;
}

export interface ProblemTestsTable {
  problem_id: string;
  version: number;
  ordinal: number;
  name: string;
  input_hash: Buffer;
  answer_hash: Buffer;
  input_size: number;
  answer_size: number;
  weight: number;
  sample: boolean;
  /** Its output validator's arguments (migration 0061); null: none. */
  validator_args: ColumnType<string[] | null, string[] | null | undefined, string[] | null>;
  /** A sample's interaction, shown with it (migration 0082); null: none. */
  interaction: ColumnType<string | null, string | null | undefined, string | null>;
}

/** A submission the retention purge deleted (migration 0030): its lookup answers 410. */
export interface SubmissionsExpiredTable {
  id: string;
  account_id: Id;
  created_at: Timestamp;
  purged_at: Generated<Date>;
}

/** Per-day totals of purged submissions (migration 0030), read beside the rows still kept. */
export interface UsageDaysTable {
  account_id: Id;
  /** 0: runs made without a key. */
  key_id: Id;
  day: ColumnType<Date, string, string>;
  runs: number;
  last_at: Timestamp;
}

/** The Jobe-compatible route's file cache (migration 0060). */
export interface JobeFilesTable {
  account_id: Id;
  file_id: string;
  content: Buffer;
  size: number;
  used_at: Generated<Date>;
}

export interface Database {
  plans: PlansTable;
  accounts: AccountsTable;
  api_keys: ApiKeysTable;
  account_usage: AccountUsageTable;
  key_usage: KeyUsageTable;
  submissions: SubmissionsTable;
  submission_output: SubmissionOutputTable;
  runners: RunnersTable;
  settings: SettingsTable;
  callback_deliveries: CallbackDeliveriesTable;
  admin_keys: AdminKeysTable;
  usage_emails: UsageEmailsTable;
  sync_capacity: SyncCapacityTable;
  portal_sessions: PortalSessionsTable;
  key_reveals: KeyRevealsTable;
  account_tokens: AccountTokensTable;
  login_attempts: LoginAttemptsTable;
  signup_attempts: SignupAttemptsTable;
  test_data: TestDataTable;
  problems: ProblemsTable;
  problem_versions: ProblemVersionsTable;
  problem_tests: ProblemTestsTable;
  problem_submissions: ProblemSubmissionsTable;
  problem_submission_files: ProblemSubmissionFilesTable;
  problem_checks: ProblemChecksTable;
  problem_check_runs: ProblemCheckRunsTable;
  problem_writes: ProblemWritesTable;
  submissions_expired: SubmissionsExpiredTable;
  usage_days: UsageDaysTable;
  jobe_files: JobeFilesTable;
}

export type Account = Selectable<AccountsTable>;
export type ApiKey = Selectable<ApiKeysTable>;
export type Plan = Selectable<PlansTable>;
export type Submission = Selectable<SubmissionsTable>;
export type NewSubmission = Insertable<SubmissionsTable>;
export type SubmissionUpdate = Updateable<SubmissionsTable>;
