// Time is read through a Clock so that month roll-over and rolling windows can be tested.
export interface Clock {
  now(): Date;
}

export const systemClock: Clock = { now: () => new Date() };

/** Calendar month in UTC, YYYY-MM. */
export function monthOf(date: Date): string {
  return date.toISOString().slice(0, 7);
}

/** Start of the next calendar month in UTC. */
export function nextMonthStart(date: Date): Date {
  return new Date(Date.UTC(date.getUTCFullYear(), date.getUTCMonth() + 1, 1));
}
