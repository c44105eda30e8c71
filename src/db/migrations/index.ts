import type { Migration } from 'kysely';
import * as m0001 from './0001_foundation.js';
import * as m0002 from './0002_callbacks.js';
import * as m0003 from './0003_operations.js';
import * as m0004 from './0004_admission_snapshot.js';
import * as m0005 from './0005_key_origins_and_modes.js';
import * as m0006 from './0006_portal.js';
import * as m0007 from './0007_marketplace_accounts.js';
import * as m0008 from './0008_cancel_stream_raw_params.js';
import * as m0009 from './0009_usage_email_states.js';
import * as m0010 from './0010_run_options_and_callback_targets.js';
import * as m0011 from './0011_admission_in_one_call.js';
import * as m0012 from './0012_email_case_and_portal_limits.js';
import * as m0013 from './0013_tests_per_minute_and_sandbox_time.js';
import * as m0014 from './0014_interactive_input.js';
import * as m0015 from './0015_key_reveals_and_widget_keys.js';
import * as m0016 from './0016_free_plan_sandbox_time.js';
import * as m0020 from './0020_job_notifications_per_commit.js';
import * as m0021 from './0021_runner_account_share.js';
import * as m0030 from './0030_retention.js';
import * as m0050 from './0050_problems.js';
import * as m0051 from './0051_problem_writes.js';
import * as m0052 from './0052_runner_claim_turns.js';
import * as m0053 from './0053_output_attempts.js';
import * as m0060 from './0060_jobe_files.js';
import * as m0061 from './0061_problem_test_validator_args.js';
import * as m0070 from './0070_problem_groups.js';
import * as m0080 from './0080_problem_includes.js';
import * as m0081 from './0081_problem_submit_answer.js';
import * as m0082 from './0082_problem_test_interactions.js';
import * as m0090 from './0090_problem_verification.js';
import * as m0100 from './0100_work_conserving_share.js';
import * as m0101 from './0101_wake_one_runner.js';
import * as m0110 from './0110_problem_feedback.js';
import * as m0120 from './0120_submissions_by_problem.js';
import * as m0121 from './0121_problem_statements.js';
import * as m0140 from './0140_run_sessions.js';
import * as m0141 from './0141_batches.js';

// Migrations in order. A new migration is a new file, added here; a shipped one never changes.
export const migrations: Record<string, Migration> = {
  '0001_foundation': m0001,
  '0002_callbacks': m0002,
  '0003_operations': m0003,
  '0004_admission_snapshot': m0004,
  '0005_key_origins_and_modes': m0005,
  '0006_portal': m0006,
  '0007_marketplace_accounts': m0007,
  '0008_cancel_stream_raw_params': m0008,
  '0009_usage_email_states': m0009,
  '0010_run_options_and_callback_targets': m0010,
  '0011_admission_in_one_call': m0011,
  '0012_email_case_and_portal_limits': m0012,
  '0013_tests_per_minute_and_sandbox_time': m0013,
  '0014_interactive_input': m0014,
  '0015_key_reveals_and_widget_keys': m0015,
  '0016_free_plan_sandbox_time': m0016,
  '0020_job_notifications_per_commit': m0020,
  '0021_runner_account_share': m0021,
  '0030_retention': m0030,
  '0050_problems': m0050,
  '0051_problem_writes': m0051,
  '0052_runner_claim_turns': m0052,
  '0053_output_attempts': m0053,
  '0060_jobe_files': m0060,
  '0061_problem_test_validator_args': m0061,
  '0070_problem_groups': m0070,
  '0080_problem_includes': m0080,
  '0081_problem_submit_answer': m0081,
  '0082_problem_test_interactions': m0082,
  '0090_problem_verification': m0090,
  '0100_work_conserving_share': m0100,
  '0101_wake_one_runner': m0101,
  '0110_problem_feedback': m0110,
  '0120_submissions_by_problem': m0120,
  '0121_problem_statements': m0121,
  '0140_run_sessions': m0140,
  '0141_batches': m0141,
};
