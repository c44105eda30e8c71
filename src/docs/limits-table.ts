import { FREE_PLAN, INTERACTOR_MARGIN_MS, JUDGE_LIMITS, MAX_MONTHLY_LIMIT, PROBLEM_LIMITS, PROGRAM_LIMITS, REQUEST_LIMITS, RETURN_FILES_LIMITS, RUN_LIMITS, STAGE_LIMIT_FLOORS, TIME_LIMIT_RULE, VERDICT_CODES, wallTimeMsFor, wallTimeRuleText, WEBSOCKET_RUNS_PER_SECOND } from '../limits.js';

// The limits table of docs/limits.md, generated from src/limits.ts so the two cannot drift
// (a unit test compares them).

const MiB = 1024 * 1024;
const n = (x: number) => x.toLocaleString('en-US');
const mib = (bytes: number) => `${n(bytes / MiB)} MiB`;

export function limitsTableMarkdown(): string {
  const rows: [string, string][] = [
    ['Memory', `${mib(RUN_LIMITS.memoryBytes)} per run, tmpfs included, no swap (status \`memory_limit\`, exit ${VERDICT_CODES.killedExitCode})`],
    ['CPU', `${RUN_LIMITS.cpuCores} cores (CPU quota)`],
    ['Timeout', `${RUN_LIMITS.timeoutMs / 1000} s wall per stage (compile, run), status \`timeout\` with \`limit_exceeded\` \`wall\`, exit ${VERDICT_CODES.killedExitCode}; CPU-time rlimit ${RUN_LIMITS.cpuTimeRlimitSeconds} s as a backstop`],
    ['Time limit (CPU time)', `a request's \`limits.time\` (a problem's time limit, Judge0's \`cpu_time_limit\`) is the CPU time of each run, all its processes together: the runner stops the run as it passes it, status \`timeout\` with \`limit_exceeded\` \`cpu\`, exit ${VERDICT_CODES.killedExitCode}. The per-process CPU-time rlimit is then only a backstop, at ${TIME_LIMIT_RULE.rlimitPerCpu} × time + ${TIME_LIMIT_RULE.rlimitExtraSeconds} s rounded up (a process it stops is a \`timeout\` too)`],
    ['Wall-clock limit beside it', `${wallTimeRuleText()} (1 s → ${wallTimeMsFor(1000) / 1000} s, 5 s → ${wallTimeMsFor(5000) / 1000} s): a program that sleeps or waits past it is a \`timeout\` with \`limit_exceeded\` \`wall\``],
    ['Processes', `${RUN_LIMITS.maxProcesses} at once; one more stops the run with exit ${VERDICT_CODES.processLimitExitCode} (status \`process_limit\`). Threads are not processes: at most ${RUN_LIMITS.maxTasks} tasks (threads included)`],
    ['Writable storage', `${mib(RUN_LIMITS.workspaceBytes)} workspace (the working directory) + ${mib(RUN_LIMITS.tmpBytes)} /tmp + ${mib(RUN_LIMITS.shmBytes)} /dev/shm, all counted in the memory limit; the rest of the file system is read-only`],
    ['Network', 'none: own network namespace with loopback only'],
    ['Lower limits per request', `\`limits\`: each run's CPU time (\`time\`) and wall time (\`wall_time\`) from ${STAGE_LIMIT_FLOORS.timeoutMs / 1000} to ${RUN_LIMITS.timeoutMs / 1000} s, its memory from ${n(STAGE_LIMIT_FLOORS.memoryBytes / 1024)} to ${n(RUN_LIMITS.memoryBytes / 1024)} KB; more or less is refused (400)`],
    ['Code size', `${n(REQUEST_LIMITS.codeMaxBytes)} UTF-8 encoded bytes`],
    ['Files', `${PROGRAM_LIMITS.filesMax} files per program, ${n(PROGRAM_LIMITS.filesMaxBytes)} decoded bytes together, names of at most ${PROGRAM_LIMITS.fileNameMaxBytes} bytes; a text file at most the code size`],
    ['Arguments and options', `${PROGRAM_LIMITS.argsMax} command-line arguments of at most ${n(PROGRAM_LIMITS.argMaxBytes)} bytes each; ${PROGRAM_LIMITS.compilerOptionsMax} compiler options, each of a form the compiler allows`],
    ['Returned files', `the first ${RETURN_FILES_LIMITS.filesMax} files under /box/out/ by name, ${RETURN_FILES_LIMITS.bytesMax / 1024 / 1024} MiB together; the rest listed in \`files_dropped\` (\`files_truncated\`)`],
    ['Input size', `${n(REQUEST_LIMITS.inputMaxBytes)} UTF-8 encoded bytes`],
    ['extra_params', `a JSON object of at most ${n(REQUEST_LIMITS.extraParamsMaxBytes)} bytes serialized, echoed in the result as sent`],
    ['Output retained', `${n(RUN_LIMITS.outputKeepBytes)} bytes per stream, cut at the last whole UTF-8 character; the rest is counted and dropped and \`truncated\` is true`],
    ['Output flood', `over ${n(RUN_LIMITS.outputFloodBytes)} bytes across both streams stops the run: exit ${VERDICT_CODES.outputLimitExitCode}, signal ${VERDICT_CODES.outputLimitSignal} (status \`output_limit\`)`],
    ['Submission rate', `${FREE_PLAN.perMinute} per rolling minute per account (Free plan), across all its keys and widgets; each test of a multi-test request counts as one, as toward the month`],
    ['Pending submissions', `${FREE_PLAN.pending} per account, queued or running (Free plan)`],
    ['Runs at once', `${FREE_PLAN.running} per account (Free plan); later runs wait in the queue; a synchronous request that finds them busy gets 429, a WebSocket run an error message`],
    ['Monthly submissions', `${n(FREE_PLAN.monthlyLimit)} per account on the Free plan, up to ${n(MAX_MONTHLY_LIMIT)} on paid plans, per calendar month in UTC`],
    ['Per-key monthly limit', 'optional, per API or widget key; stops only that key, never above the account allowance'],
    ['Tests per request', `${FREE_PLAN.testsPerRequest} (Free plan)`],
    ['Sandbox time per request', `${FREE_PLAN.sandboxSecondsPerRequest} s (Free plan): the compile stage's timeout plus tests × the run stage's timeout (${RUN_LIMITS.timeoutMs / 1000} s each unless the request or a compatible route lowered them), and a checker program's or interactor's stages (its compile at ${RUN_LIMITS.timeoutMs / 1000} s, then one per test at the run's timeout, an interactor's with its margin); more is refused with 400 \`too_much_sandbox_time\``],
    ['Judged output', `a judged run's whole stdout up to the output flood limit (${n(RUN_LIMITS.outputFloodBytes)} bytes, or twice a larger expected output's size) is compared; a checker's message is kept up to ${n(JUDGE_LIMITS.checkerMessageMaxBytes)} bytes; an interactor's wall-clock limit is the run's plus ${INTERACTOR_MARGIN_MS / 1000} s`],
    ['Stored problems', `${mib(FREE_PLAN.problemStorageBytes)} of test data per account (Free plan), each distinct file counted once; a test's input or expected output at most ${mib(PROBLEM_LIMITS.testFileMaxBytes)}, at most ${n(PROBLEM_LIMITS.testsMax)} tests per problem, a problem sent (JSON or zip) at most ${mib(PROBLEM_LIMITS.uploadMaxBytes)}; a package's problem.yaml at most ${PROBLEM_LIMITS.metadataFileMaxBytes / 1024} KiB, nested at most ${PROBLEM_LIMITS.yamlMaxDepth} levels; ${PROBLEM_LIMITS.writesPerMinute} problem writes (create, replace, delete) per account per minute, then 429`],
    ['WebSocket rate', `${WEBSOCKET_RUNS_PER_SECOND} execution per second per connection`],
  ];
  return ['| limit | value |', '|---|---|', ...rows.map(([k, v]) => `| ${k} | ${v} |`)].join('\n');
}
