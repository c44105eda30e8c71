import { ProblemInputError } from '../draft.js';

// What an upload's answer says of a package: its format and type, every key and
// directory runbox read, and every one it ignored with the reason (statements, input
// validators, generators, ...). What it cannot honour is refused instead (refuse()), the
// message naming the key: nothing of a package is dropped without a word.

export interface PackageReport {
  /** legacy, 2023-07-draft, 2025-09 (problem.yaml's problem_format_version), or plain (a tests/ archive). */
  format: string;
  /** problem.yaml's type: pass-fail, scoring, interactive, multi-pass, submit-answer. */
  type: string[];
  /** Keys (problem.yaml's limits.memory, data/secret/testdata.yaml's on_reject) and paths read. */
  read: string[];
  ignored: { key: string; reason: string }[];
}

export const refuse = (message: string) => new ProblemInputError(message, 'invalid_package');

export class ReportBuilder {
  private readonly readKeys = new Set<string>();
  private readonly ignoredKeys = new Map<string, string>();

  constructor(
    public format: string,
    public type: string[],
  ) {}

  read(key: string): void {
    this.readKeys.add(key);
    this.ignoredKeys.delete(key);
  }

  ignore(key: string, reason: string): void {
    if (!this.readKeys.has(key)) this.ignoredKeys.set(key, reason);
  }

  has(key: string): boolean {
    return this.readKeys.has(key) || this.ignoredKeys.has(key);
  }

  /** Whether a key or path at or below `prefix` was read. */
  readBelow(prefix: string): boolean {
    return [...this.readKeys].some((k) => k.startsWith(prefix));
  }

  /** Every key of a mapping not yet read or ignored, as ignored with `reason`. */
  rest(prefix: string, mapping: Record<string, unknown>, reason: string): void {
    for (const key of Object.keys(mapping)) if (!this.has(`${prefix}${key}`)) this.ignore(`${prefix}${key}`, reason);
  }

  done(): PackageReport {
    return { format: this.format, type: this.type, read: [...this.readKeys].sort(), ignored: [...this.ignoredKeys].map(([key, reason]) => ({ key, reason })).sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0)) };
  }
}
