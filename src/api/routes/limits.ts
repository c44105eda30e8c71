import { FREE_PLAN, FREE_PLAN_NAME, JUDGE_LIMITS, MAX_MONTHLY_LIMIT, PROBLEM_LIMITS, PROGRAM_LIMITS, RATE_WINDOW_MS, REQUEST_LIMITS, RETURN_FILES_LIMITS, RUN_LIMITS, TIME_LIMIT_RULE, VERDICT_CODES, wallTimeRuleText, WEBSOCKET_RUNS_PER_SECOND } from '../../limits.js';
import type { RouteDef } from '../route.js';
import { LimitsDocument } from '../schemas.js';
import type { Static } from 'typebox';

/** Every limit, with units in the names, from src/limits.ts. */
export function limitsDocument(): Static<typeof LimitsDocument> {
  return {
    run: {
      memory_bytes: RUN_LIMITS.memoryBytes,
      cpu_cores: RUN_LIMITS.cpuCores,
      timeout_ms: RUN_LIMITS.timeoutMs,
      cpu_time_ms: RUN_LIMITS.cpuTimeMs,
      wall_time_per_cpu_time: TIME_LIMIT_RULE.wallPerCpu,
      wall_time_extra_ms: TIME_LIMIT_RULE.wallExtraMs,
      wall_time_rule: wallTimeRuleText(),
      max_processes: RUN_LIMITS.maxProcesses,
      workspace_bytes: RUN_LIMITS.workspaceBytes,
      tmp_bytes: RUN_LIMITS.tmpBytes,
      storage_counts_toward_memory: true,
      network: RUN_LIMITS.network,
      output_kept_bytes_per_stream: RUN_LIMITS.outputKeepBytes,
      output_flood_bytes_both_streams: RUN_LIMITS.outputFloodBytes,
      output_flood_exit_code: VERDICT_CODES.outputLimitExitCode,
      process_limit_exit_code: VERDICT_CODES.processLimitExitCode,
    },
    request: {
      code_max_bytes: REQUEST_LIMITS.codeMaxBytes,
      input_max_bytes: REQUEST_LIMITS.inputMaxBytes,
      extra_params_max_bytes: REQUEST_LIMITS.extraParamsMaxBytes,
      body_max_bytes: REQUEST_LIMITS.bodyMaxBytes,
      files_max: PROGRAM_LIMITS.filesMax,
      files_max_bytes: PROGRAM_LIMITS.filesMaxBytes,
      file_name_max_bytes: PROGRAM_LIMITS.fileNameMaxBytes,
      args_max: PROGRAM_LIMITS.argsMax,
      arg_max_bytes: PROGRAM_LIMITS.argMaxBytes,
      compiler_options_max: PROGRAM_LIMITS.compilerOptionsMax,
      return_files_max: RETURN_FILES_LIMITS.filesMax,
      return_files_max_bytes: RETURN_FILES_LIMITS.bytesMax,
    },
    account: {
      plan: FREE_PLAN_NAME,
      submissions_per_minute: FREE_PLAN.perMinute,
      rate_window_ms: RATE_WINDOW_MS,
      pending_submissions: FREE_PLAN.pending,
      runs_at_once: FREE_PLAN.running,
      tests_per_request: FREE_PLAN.testsPerRequest,
      sandbox_seconds_per_request: FREE_PLAN.sandboxSecondsPerRequest,
      problem_storage_bytes: FREE_PLAN.problemStorageBytes,
      monthly_submissions: FREE_PLAN.monthlyLimit,
      max_monthly_submissions_any_plan: MAX_MONTHLY_LIMIT,
      monthly_period: 'calendar month, UTC',
      per_key_monthly_limit: 'optional per key; stops only that key; never above the account allowance',
    },
    problems: {
      test_file_max_bytes: PROBLEM_LIMITS.testFileMaxBytes,
      tests_max: PROBLEM_LIMITS.testsMax,
      upload_max_bytes: PROBLEM_LIMITS.uploadMaxBytes,
      checker_message_max_bytes: JUDGE_LIMITS.checkerMessageMaxBytes,
    },
    websocket_runs_per_second_per_connection: WEBSOCKET_RUNS_PER_SECOND,
  };
}

// GET /api/limits/: no key needed.
export const limitsRoute: RouteDef = {
  method: 'GET',
  path: '/api/limits/',
  operationId: 'getLimits',
  summary: 'Every limit of the service (Free plan figures for the per-account ones).',
  auth: 'none',
  responses: { 200: { description: 'The limits.', schema: LimitsDocument } },
  errors: [405, 406],
  handler: () => async (ctx) => {
    ctx.body = limitsDocument();
  },
};
