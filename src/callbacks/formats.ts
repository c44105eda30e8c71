import { judge0CallbackBody } from '../compat/judge0/view.js';
import { presentResult, type RunResult } from '../result.js';
import type { ClaimedDelivery } from './delivery.js';

// How a delivery's body is rendered from its payload. 'runbox': the one presentation
// of a result (documented field order, extra_params exactly as sent). A compatible API's format: the stored {result, compat} rendered in that
// API's own shape (Judge0 PUTs its submission object to callback_url).

type Rendered = Pick<ClaimedDelivery, 'format' | 'payload' | 'submission_id' | 'extra_params_json'>;

const FORMATS: Record<string, (d: Rendered) => string> = {
  runbox: (d) => presentResult(d.payload as RunResult, { extraParamsJson: d.extra_params_json }),
  judge0: (d) => JSON.stringify(judge0CallbackBody(d.payload as Parameters<typeof judge0CallbackBody>[0], d.submission_id)),
};

export function renderBody(d: Rendered): string {
  const render = FORMATS[d.format] ?? FORMATS['runbox']!;
  return render(d);
}
