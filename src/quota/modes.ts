import type { SubmissionMode } from '../db/schema.js';

// How admission and the queue treat each submission mode.

/** Modes whose caller waits for the result: refused rather than queued when no slot is free. */
export const WAITING_MODES: readonly SubmissionMode[] = ['sync', 'ws', 'piston', 'jobe'];

/** Claim order (lower first): interactive runs go ahead of queued asynchronous ones. */
// A batch's runs (bulk evaluation) come after every other mode's queued jobs.
export const MODE_PRIORITY: Record<SubmissionMode, number> = { sync: -10, ws: -10, piston: -10, jobe: -10, judge0: 0, async: 0, batch: 10 };
