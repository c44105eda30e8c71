import { judge0CallbackBody } from '../compat/judge0/view.js';
import { presentResult, type RunResult } from '../result.js';
import type { ClaimedDelivery } from './delivery.js';
import type { Db } from '../db/connect.js';
import { keyAsker, resultFor } from '../problems/feedback.js';

// How a delivery's body is rendered from its payload. 'runbox': the one presentation
// of a result (documented field order, extra_params exactly as sent). A compatible API's format: the stored {result, compat} rendered in that
// API's own shape (Judge0 PUTs its submission object to callback_url).

type Rendered = Pick<ClaimedDelivery, 'format' | 'payload' | 'submission_id' | 'extra_params_json'>;
type Addressed = Rendered & Pick<ClaimedDelivery, 'key_account_id' | 'key_kind' | 'key_student'>;

const FORMATS: Record<string, (d: Rendered) => string> = {
  runbox: (d) => presentResult(d.payload as RunResult, { extraParamsJson: d.extra_params_json }),
  judge0: (d) => JSON.stringify(judge0CallbackBody(d.payload as Parameters<typeof judge0CallbackBody>[0], d.submission_id)),
};

export function renderBody(d: Rendered): string {
  const render = FORMATS[d.format] ?? FORMATS['runbox']!;
  return render(d);
}

/** The body of a delivery as its key may see the result (src/problems/feedback.ts): the outbox keeps the whole result, each attempt filters it. */
export async function renderBodyFor(db: Db, d: Addressed): Promise<string> {
  const asker = keyAsker({ accountId: d.key_account_id, kind: d.key_kind, student: d.key_student });
  if (d.format === 'judge0') {
    const p = d.payload as { result: RunResult | null };
    return renderBody({ ...d, payload: { ...p, result: p.result ? await resultFor(db, asker, p.result) : p.result } });
  }
  return renderBody({ ...d, payload: await resultFor(db, asker, d.payload as RunResult) });
}
