import { PROBLEM_TIME_DEFAULTS, RUN_LIMITS, STAGE_LIMIT_FLOORS } from '../limits.js';
import { ProblemInputError } from './draft.js';
import type { PackageTiming } from './package/limits.js';

// A package's time limit as its judge would have it. Stated: problem.yaml's
// limits.time_limit, a .timelimit file, or domjudge-problem.ini's timelimit. Otherwise
// derived, as problemtools' verifyproblem does, from the slowest accepted example
// submission (its slowest test): T_ac × ac_to_time_limit, rounded up to a multiple of
// time_resolution, at least one such multiple. The multipliers: legacy
// limits.time_multiplier (default 5) and time_safety_margin (2); from 2023-07 on
// limits.time_multipliers.ac_to_time_limit (2.0) and time_limit_to_tle (1.5), and
// limits.time_resolution (1 s; legacy packages round to whole seconds too). Until a
// verification derives one, a problem runs at PROBLEM_TIME_DEFAULTS.defaultSeconds.

export interface Timing {
  /** CPU seconds the package states, and where; absent: none stated. */
  stated?: { seconds: number; from: 'problem.yaml' | '.timelimit' | 'domjudge-problem.ini' };
  acToTimeLimit: number;
  timeLimitToTle: number;
  resolution: number;
}

export type TimeLimitSource = 'stated' | 'derived' | 'default';

export interface TimeLimit {
  seconds: number;
  source: TimeLimitSource;
}

const bad = (message: string) => new ProblemInputError(message, 'invalid_package');

const factor = (v: unknown, where: string, fallback: number): number => {
  if (v === undefined || v === null) return fallback;
  if (typeof v !== 'number' || !Number.isFinite(v) || v < 1) throw bad(`problem.yaml: ${where} must be a number of at least 1`);
  return v;
};

/**
 * The timing a verification uses, from what the package reader took of problem.yaml's
 * limits (src/problems/package/limits.ts) and the limit it found stated: legacy packages
 * by time_multiplier and time_safety_margin, later ones by time_multipliers and
 * time_resolution.
 */
export function timingOf(pkg: PackageTiming, legacy: boolean, statedSeconds: number | undefined): Timing {
  const timing: Timing = legacy
    ? {
        acToTimeLimit: factor(pkg.time_multiplier, 'limits.time_multiplier', 5),
        timeLimitToTle: factor(pkg.time_safety_margin, 'limits.time_safety_margin', 2),
        resolution: 1,
      }
    : {
        acToTimeLimit: factor(pkg.ac_to_time_limit, 'limits.time_multipliers.ac_to_time_limit', 2),
        timeLimitToTle: factor(pkg.time_limit_to_tle, 'limits.time_multipliers.time_limit_to_tle', 1.5),
        resolution: pkg.time_resolution ?? 1,
      };
  if (statedSeconds !== undefined && pkg.time_limit_source) timing.stated = { seconds: statedSeconds, from: pkg.time_limit_source };
  return timing;
}

/** The timing of a problem that came without a package (JSON): its limits.time is stated, if given. */
export const plainTiming = (seconds: number | undefined): Timing => ({
  acToTimeLimit: 2,
  timeLimitToTle: 1.5,
  resolution: 1,
  ...(seconds !== undefined ? { stated: { seconds, from: 'problem.yaml' as const } } : {}),
});

/** problemtools' time limit from the slowest accepted run (CPU seconds): max(1, ⌈T × ac_to_time_limit / resolution⌉) × resolution. */
export function deriveTimeLimit(timing: Timing, slowestAccepted: number): number {
  const exact = slowestAccepted * timing.acToTimeLimit;
  const steps = Math.max(1, Math.ceil(exact / timing.resolution - 1e-9));
  // Rounded to the resolution's decimals: 3 × 0.1 is 0.30000000000000004.
  return Number((steps * timing.resolution).toFixed(6));
}

/** Whether a derived limit is one the service can run at (its own bounds). */
export function withinService(seconds: number): boolean {
  return seconds >= STAGE_LIMIT_FLOORS.timeoutMs / 1000 && seconds <= RUN_LIMITS.timeoutMs / 1000;
}

/** The limit a problem's runs have: stated (its limits.time), else derived by a verification, else the default. */
export function timeLimitOf(limitsTime: number | undefined, derived: number | null | undefined): TimeLimit {
  if (limitsTime !== undefined) return { seconds: limitsTime, source: 'stated' };
  if (derived !== null && derived !== undefined) return { seconds: derived, source: 'derived' };
  return { seconds: PROBLEM_TIME_DEFAULTS.defaultSeconds, source: 'default' };
}
