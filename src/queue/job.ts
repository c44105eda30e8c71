import type { RunOptions, SubmissionMode, TestCaseRow } from '../db/schema.js';

// What a runner gets when it claims a submission: everything needed to run it and to
// report back. Column names as in the submissions table.
export interface ClaimedJob {
  id: string;
  account_id: string;
  key_id: string | null;
  compiler: string;
  code: string;
  input: string | null;
  tests: TestCaseRow[] | null;
  extra_params: Record<string, unknown> | null;
  /** Extra files, program arguments and lower stage limits; null for plain runs. */
  run_options: RunOptions | null;
  mode: SubmissionMode;
  units: number;
  month: string;
  attempts: number;
  max_attempts: number;
  /** How long it had been due when claimed (the database's clock). */
  queued_seconds?: number;
  /** Claimed in a slot beyond its account's share of the runner (lent while no other account's run waited). */
  borrowed?: boolean;
}

/** Notified (payload empty) when a submission becomes claimable. */
export const JOBS_CHANNEL = 'runbox_jobs';
/** Notified with `<submission id>:<finished|failed>` when a submission reaches 'finished' or 'failed'. */
export const DONE_CHANNEL = 'runbox_done';

/**
 * The job a transition acts on: its id, or its id and the attempt number of the claim.
 * With the attempt, a runner's stale run of a job that it has since claimed again
 * (its lease ran out, the job was requeued and came back to it) cannot act for the
 * newer claim.
 */
export type JobRef = string | { id: string; attempt: number };

export function refParts(ref: JobRef): { id: string; attempt: number | null } {
  return typeof ref === 'string' ? { id: ref, attempt: null } : { id: ref.id, attempt: ref.attempt };
}
