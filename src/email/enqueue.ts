// Usage emails are written by admission itself (runbox_admit, migration 0011), in the
// transaction that moves usage across a threshold of ./thresholds.ts, ON CONFLICT DO
// NOTHING, so an email already written this month for that threshold (even before a
// refund brought usage back down) is not written again. Accounts without an address
// (marketplace subscribers, who hear from the marketplace) get none. It notifies this
// channel, delivered to mailers only when the admission commits.

export const MAIL_CHANNEL = 'runbox_mail';
