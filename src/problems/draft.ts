import type { GroupTree } from '../judge/groups.js';
import type { CheckerSetting, ProgramSource } from '../judge/settings.js';
import type { ExampleSubmission } from './example-submissions.js';
import type { Timing } from './time-limit.js';
import { PROBLEM_LIMITS, PROBLEM_STATEMENT_LIMITS, RUN_LIMITS, STAGE_LIMIT_FLOORS } from '../limits.js';
import type { Includes } from './include.js';
import { sha256 } from './test-data.js';

// A problem as sent, checked and ready to store: its tests (their data read when it is
// stored, one file at a time, so a package's megabytes are never all in memory at once),
// its checker, interactor and limits. Made from a JSON body (json.ts) or a zip package
// (package.ts).

/** A refused problem: a 400 whose message says what to fix; nothing is stored. */
export class ProblemInputError extends Error {
  constructor(
    message: string,
    readonly code = 'invalid_problem',
  ) {
    super(message);
  }
}

export interface DataSource {
  /** Bytes, as declared (a zip's central directory) or known. */
  size: number;
  /** Sources of the same bytes share it (a zip entry's declared CRC-32 and size, or the
   *  content's sha-256), so sources with different keys surely hold different bytes. */
  key: string;
  /** The content's sha-256, when it is known before the content is read. */
  hash?: Buffer;
  read(): Promise<Buffer>;
}

export interface DraftTest {
  name: string;
  input: DataSource;
  answer: DataSource;
  weight: number;
  sample: boolean;
  /** Its group's arguments for the output validator (a Kattis package's); none when absent. */
  validatorArgs?: string[];
  /** A sample's interaction (data/sample/NAME.interaction: src/problems/interaction.ts), shown with it. */
  interaction?: string;
}

/** A problem's limits as a request gives them: CPU seconds and KB, as the result reports time and memory. */
export interface ProblemLimits {
  time?: number;
  memory?: number;
  /** KB of output (stdout and stderr) a run may write: a package's limits.output, below the service's own. */
  output?: number;
}

/** What a package said of itself beyond its tests: the upload's report, and its timing (src/problems/package/). */
export interface PackageModel {
  report: import('./package/report.js').PackageReport;
  timing: import('./package/limits.js').PackageTiming;
}

export interface ProblemDraft {
  name: string;
  tests: DraftTest[];
  checker: CheckerSetting;
  interactor: ProgramSource | null;
  limits: ProblemLimits;
  /** Files copied over a submission before it is built, by language code (a package's include/: src/problems/include.ts). */
  include?: Includes | null;
  /** A submit-answer problem (src/runner/answers.ts): a submission is its answer files. */
  submitAnswer?: boolean;
  /** What a package says of its time limit (src/problems/time-limit.ts); absent: a JSON problem's limits.time alone. */
  timing?: Timing;
  /** A package's example submissions (submissions/), kept with the version for verifying it. */
  submissions?: ExampleSubmission[];

  /** A Kattis package's tree of test groups (the tests are in its order). */
  groups?: GroupTree;
  package?: PackageModel;
  /** Its statement: Markdown (the portal's form, a package's problem.md), or a package's LaTeX source. */
  statement?: ProblemStatement | undefined;
  /** The sha-256 of the package it was read from. */
  packageHash?: Buffer | undefined;
}

export interface ProblemStatement {
  format: 'markdown' | 'latex';
  text: string;
}

export function bufferSource(content: Buffer): DataSource {
  const hash = sha256(content);
  return { size: content.length, key: `sha256:${hash.toString('hex')}`, hash, read: async () => content };
}

/** Test names: segments of letters, digits and ._+- joined by / (sample/1, secret/group1/03). */
const TEST_NAME = /^[A-Za-z0-9._+-]+(?:\/[A-Za-z0-9._+-]+)*$/;

/** Checks what every problem must be, whatever it came as; throws ProblemInputError. */
export function checkDraft(draft: ProblemDraft): ProblemDraft {
  if (draft.name.trim() === '' || Buffer.byteLength(draft.name) > PROBLEM_LIMITS.nameMaxBytes) {
    throw new ProblemInputError(`the problem's name must be 1 to ${PROBLEM_LIMITS.nameMaxBytes} bytes`);
  }
  if (draft.tests.length === 0) throw new ProblemInputError('a problem needs at least one test');
  if (draft.tests.length > PROBLEM_LIMITS.testsMax) throw new ProblemInputError(`a problem may have at most ${PROBLEM_LIMITS.testsMax} tests (it has ${draft.tests.length})`);
  const names = new Set<string>();
  for (const t of draft.tests) {
    if (!TEST_NAME.test(t.name) || Buffer.byteLength(t.name) > PROBLEM_LIMITS.nameMaxBytes || t.name.split('/').some((s) => s === '.' || s === '..')) {
      throw new ProblemInputError(`test name ${JSON.stringify(t.name)} must be segments of letters, digits and . _ + - joined by /, at most ${PROBLEM_LIMITS.nameMaxBytes} bytes`);
    }
    if (names.has(t.name)) throw new ProblemInputError(`test name ${JSON.stringify(t.name)} is given twice`);
    names.add(t.name);
    if (!Number.isFinite(t.weight) || t.weight < 0) throw new ProblemInputError(`test ${t.name}: weight must be a number of at least 0`);
    for (const [what, source] of [['input', t.input], ['expected output', t.answer]] as const) {
      if (source.size > PROBLEM_LIMITS.testFileMaxBytes) {
        throw new ProblemInputError(`test ${t.name}: its ${what} is ${source.size} bytes; a test file may have at most ${PROBLEM_LIMITS.testFileMaxBytes} bytes (16 MiB)`, 'test_file_too_large');
      }
    }
  }
  checkLimits(draft.limits);
  if (draft.statement && Buffer.byteLength(draft.statement.text) > PROBLEM_STATEMENT_LIMITS.maxBytes) {
    throw new ProblemInputError(`the statement is ${Buffer.byteLength(draft.statement.text)} bytes; it may have at most ${PROBLEM_STATEMENT_LIMITS.maxBytes}`);
  }
  return draft;
}

/** A problem's limits within the service's and above the floors; throws naming the bound. */
export function checkLimits(limits: ProblemLimits): void {
  const maxTime = RUN_LIMITS.timeoutMs / 1000;
  const minTime = STAGE_LIMIT_FLOORS.timeoutMs / 1000;
  if (limits.time !== undefined && !(limits.time >= minTime && limits.time <= maxTime)) {
    throw new ProblemInputError(`limits.time must be from ${minTime} to ${maxTime} seconds (the service's), got ${limits.time}`);
  }
  const maxKb = RUN_LIMITS.memoryBytes / 1024;
  const minKb = STAGE_LIMIT_FLOORS.memoryBytes / 1024;
  if (limits.memory !== undefined && !(Number.isInteger(limits.memory) && limits.memory >= minKb && limits.memory <= maxKb)) {
    throw new ProblemInputError(`limits.memory must be a whole number of KB from ${minKb} to ${maxKb} (the service's), got ${limits.memory}`);
  }
}
