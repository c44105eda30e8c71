import type { ProblemBody } from '../api/schemas.js';
import { checkerSetting, JudgeSettingsError, programSource } from '../judge/settings.js';
import { bufferSource, checkDraft, ProblemInputError, type ProblemDraft } from './draft.js';

// A problem sent as JSON (ProblemBody, already checked against its schema) as a draft.

export function problemFromJson(body: ProblemBody): ProblemDraft {
  try {
    return checkDraft({
      name: body.name ?? 'Untitled problem',
      tests: body.tests.map((t, i) => ({
        name: t.name ?? String(i + 1),
        input: bufferSource(Buffer.from(t.input, 'utf8')),
        answer: bufferSource(Buffer.from(t.expected_output, 'utf8')),
        weight: t.weight ?? 1,
        sample: t.sample ?? false,
      })),
      checker: checkerSetting(body.checker),
      interactor: body.interactor ? programSource(body.interactor, 'interactor') : null,
      limits: body.limits ?? {},
    });
  } catch (err) {
    if (err instanceof JudgeSettingsError) throw new ProblemInputError(err.message);
    throw err;
  }
}
