// The job queue: one module per transition of a submission, each a single statement.
export { accountSlots, claim, type AccountShare } from './claim.js';
export { complete } from './complete.js';
export { completeAndClaim } from './complete-and-claim.js';
export { createDoneWatcher, type DoneWatcher, type DoneWatcherOptions, type EndedRun, type FinalState } from './done.js';
export { fail, type FailOptions } from './fail.js';
export { heartbeat, liveRunnerSlots, markStopped, type RunnerInfo } from './heartbeat.js';
export { DONE_CHANNEL, JOBS_CHANNEL, type ClaimedJob, type JobRef } from './job.js';
export { reapExpired, type Reaped } from './reap.js';
export { release } from './release.js';
export { createWaker, type WakeReason, type Waker, type WakerOptions } from './waker.js';
export { CANCEL_CHANNEL, cancelSubmission, cancelledAmong, type Cancelled } from './cancel.js';
export { dropWakes, passWake, registerWakes, wakeChannelOf, type WakeTokens } from './wake.js';
export { runsWaiting } from './waiting.js';
