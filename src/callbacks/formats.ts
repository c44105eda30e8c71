import { judge0CallbackBody } from '../compat/judge0/view.js';
import type { ClaimedDelivery } from './delivery.js';

// How a delivery's body is rendered from its payload. 'runbox': the one result shape,
// as stored. A compatible API's format: the stored {result, compat} rendered in that
// API's own shape (Judge0 PUTs its submission object to callback_url).

const FORMATS: Record<string, (payload: unknown, submissionId: string) => string> = {
  runbox: (payload) => JSON.stringify(payload),
  judge0: (payload, id) => JSON.stringify(judge0CallbackBody(payload as Parameters<typeof judge0CallbackBody>[0], id)),
};

export function renderBody(d: Pick<ClaimedDelivery, 'format' | 'payload' | 'submission_id'>): string {
  const render = FORMATS[d.format] ?? FORMATS['runbox']!;
  return render(d.payload, d.submission_id);
}
