// Usage email thresholds: the first time in a month that usage reaches 80%
// and 100% of an allowance. Reaching means the count moved from below the threshold's
// figure to at or above it; the outbox's unique row makes it the first time only.

export const USAGE_THRESHOLDS = [80, 100] as const;
export type UsageThreshold = (typeof USAGE_THRESHOLDS)[number];

/** The smallest usage that counts as having reached `percent` of `limit`. */
export function thresholdCount(limit: number, percent: UsageThreshold): number {
  return Math.ceil((limit * percent) / 100);
}

/** Thresholds that usage moving from `before` to `after` reaches. A zero allowance is never reached. */
export function crossedThresholds(before: number, after: number, limit: number | null): UsageThreshold[] {
  if (limit === null || limit <= 0) return [];
  return USAGE_THRESHOLDS.filter((p) => before < thresholdCount(limit, p) && after >= thresholdCount(limit, p));
}
