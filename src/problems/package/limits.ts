import { REQUEST_LIMITS, RUN_LIMITS } from '../../limits.js';
import type { ProblemLimits } from '../draft.js';
import { metadataFile, type PackageFiles } from './files.js';
import { refuse, type ReportBuilder } from './report.js';

// A package's limits (problem.yaml's limits:, .timelimit, domjudge-problem.ini's
// timelimit): each one runbox can honour taken, each one it cannot refused naming the
// key, as the format says a system must (a submission limit enforced exactly, a resource
// guarantee at least given). The time limit's multipliers are kept for verifying the
// package (the derived time limit), with whether a time limit was stated at all.

const MiB = 1024 * 1024;

/** How the package times submissions: a stated limit, or what a derived one is made of. */
export interface PackageTiming {
  /** A time limit was stated (limits.time_limit, .timelimit or domjudge-problem.ini's timelimit). */
  time_limit_stated: boolean;
  time_limit_source?: 'problem.yaml' | '.timelimit' | 'domjudge-problem.ini';
  /** 2025-09 limits.time_multipliers. */
  ac_to_time_limit?: number;
  time_limit_to_tle?: number;
  /** 2025-09 limits.time_resolution (seconds). */
  time_resolution?: number;
  /** Legacy limits.time_multiplier and time_safety_margin. */
  time_multiplier?: number;
  time_safety_margin?: number;
  /** 2025-09 limits.validation_passes (multi-pass problems). */
  validation_passes?: number;
}

const positive = (value: unknown, key: string, integer = false): number => {
  if (typeof value !== 'number' || !(value > 0) || (integer && !Number.isInteger(value))) throw refuse(`problem.yaml: limits.${key} must be a${integer ? ' whole' : ''} number above 0`);
  return value;
};

/** A guarantee (compilation_*, validation_*): taken when the service gives at least that much, else refused naming the key. */
function guarantee(l: Record<string, unknown>, key: string, most: number, unit: string, report: ReportBuilder): void {
  if (l[key] === undefined) return;
  const value = positive(l[key], key, true);
  if (value > most) throw refuse(`problem.yaml: limits.${key} is ${value} ${unit}; runbox gives at most ${most} ${unit}, so it cannot honour it: refused`);
  report.read(`problem.yaml: limits.${key}`);
}

export async function packageLimits(yaml: Record<string, unknown>, files: PackageFiles, report: ReportBuilder): Promise<{ limits: ProblemLimits; timing: PackageTiming }> {
  const limits: ProblemLimits = {};
  const timing: PackageTiming = { time_limit_stated: false };
  const section = yaml.limits;
  if (section !== undefined && section !== null && (typeof section !== 'object' || Array.isArray(section))) throw refuse('problem.yaml: limits must be a mapping');
  const l = (section ?? {}) as Record<string, unknown>;
  const yamlKey = (key: string) => report.read(`problem.yaml: limits.${key}`);
  for (const key of ['time_limit', 'time']) {
    if (l[key] === undefined) continue;
    if (typeof l[key] !== 'number') throw refuse(`problem.yaml: limits.${key} must be a number of seconds`);
    limits.time ??= l[key];
    Object.assign(timing, { time_limit_stated: true, time_limit_source: 'problem.yaml' });
    yamlKey(key);
  }
  const dotTime = files.get('.timelimit');
  if (dotTime) {
    report.read('.timelimit');
    if (limits.time === undefined) {
      const seconds = Number((await metadataFile(dotTime, '.timelimit')).toString('utf8').trim());
      if (!Number.isFinite(seconds)) throw refuse('.timelimit must hold a number of seconds');
      limits.time = seconds;
      Object.assign(timing, { time_limit_stated: true, time_limit_source: '.timelimit' });
    }
  }
  const ini = await domjudgeIni(files, report);
  if (ini.timelimit !== undefined && limits.time === undefined) {
    const seconds = Number(ini.timelimit);
    if (!Number.isFinite(seconds)) throw refuse('domjudge-problem.ini: timelimit must be a number of seconds');
    limits.time = seconds;
    Object.assign(timing, { time_limit_stated: true, time_limit_source: 'domjudge-problem.ini' });
  }
  if (l.memory !== undefined) {
    if (typeof l.memory !== 'number' || !Number.isInteger(l.memory)) throw refuse('problem.yaml: limits.memory must be a whole number of MiB');
    limits.memory = l.memory * 1024;
    yamlKey('memory');
  }
  if (l.output !== undefined) {
    const mib = positive(l.output, 'output', true);
    const most = RUN_LIMITS.outputFloodBytes / MiB;
    if (mib > most) throw refuse(`problem.yaml: limits.output is ${mib} MiB; a run's output is held to at most ${most} MiB here, so it cannot honour it: refused`);
    limits.output = mib * 1024;
    yamlKey('output');
  }
  if (l.code !== undefined) {
    const kib = positive(l.code, 'code', true);
    const ours = REQUEST_LIMITS.codeMaxBytes;
    // A submission limit is enforced exactly: neither more than ours nor a smaller bound runbox does not hold submissions to.
    if (kib * 1024 !== ours) throw refuse(`problem.yaml: limits.code is ${kib} KiB; submissions here are held to ${ours} bytes of code, so it cannot honour it: refused`);
    yamlKey('code');
  }
  const stageSeconds = RUN_LIMITS.timeoutMs / 1000;
  const stageMiB = RUN_LIMITS.memoryBytes / MiB;
  guarantee(l, 'compilation_time', stageSeconds, 's', report);
  guarantee(l, 'compilation_memory', stageMiB, 'MiB', report);
  guarantee(l, 'validation_time', stageSeconds, 's', report);
  guarantee(l, 'validation_memory', stageMiB, 'MiB', report);
  guarantee(l, 'validation_output', RUN_LIMITS.outputFloodBytes / MiB, 'MiB', report);
  const multipliers = l.time_multipliers;
  if (multipliers !== undefined && multipliers !== null) {
    if (typeof multipliers !== 'object' || Array.isArray(multipliers)) throw refuse('problem.yaml: limits.time_multipliers must be a mapping');
    const m = multipliers as Record<string, unknown>;
    for (const key of ['ac_to_time_limit', 'time_limit_to_tle'] as const) {
      if (m[key] === undefined) continue;
      if (typeof m[key] !== 'number' || m[key] < 1) throw refuse(`problem.yaml: limits.time_multipliers.${key} must be a number of at least 1`);
      timing[key] = m[key];
      yamlKey(`time_multipliers.${key}`);
    }
    report.rest('problem.yaml: limits.time_multipliers.', m, 'not a key of time_multipliers');
    yamlKey('time_multipliers');
  }
  for (const key of ['time_resolution', 'time_multiplier', 'time_safety_margin'] as const) {
    if (l[key] === undefined) continue;
    timing[key] = positive(l[key], key);
    yamlKey(key);
  }
  if (l.validation_passes !== undefined) {
    timing.validation_passes = positive(l.validation_passes, 'validation_passes', true);
    yamlKey('validation_passes');
  }
  report.rest('problem.yaml: limits.', l, 'not a key of limits');
  if (section !== undefined) report.read('problem.yaml: limits');
  return { limits, timing };
}

const INI_IGNORED: Record<string, string> = {
  points: "a contest's points for the problem: runbox scores by the package's tests and groups",
  probid: "the contest's short name for the problem",
  name: "problem.yaml's name is used (DOMjudge's own name is the contest's)",
  color: "the contest's balloon colour",
  allow_submit: 'a contest setting',
  allow_judge: 'a contest setting',
  special_run: 'a DOMjudge server executable, not in the package',
  externalid: 'a contest setting',
};

/** domjudge-problem.ini's keys (key = value lines), reported; timelimit and special_compare are read. */
async function domjudgeIni(files: PackageFiles, report: ReportBuilder): Promise<Record<string, string>> {
  const file = files.get('domjudge-problem.ini');
  if (!file) return {};
  if (file.size > 64 * 1024) throw refuse('domjudge-problem.ini is larger than 64 KiB');
  report.read('domjudge-problem.ini');
  const out: Record<string, string> = {};
  for (const line of (await file.read()).toString('utf8').split(/\r?\n/)) {
    const m = /^\s*([A-Za-z_][A-Za-z0-9_]*)\s*=\s*['"]?([^'"\r\n]*?)['"]?\s*$/.exec(line);
    if (!m) continue;
    const [, key, value] = m as unknown as [string, string, string];
    out[key] = value.trim();
    if (key === 'timelimit' || key === 'special_compare') report.read(`domjudge-problem.ini: ${key}`);
    else report.ignore(`domjudge-problem.ini: ${key}`, INI_IGNORED[key] ?? 'not a key runbox reads');
  }
  return out;
}
