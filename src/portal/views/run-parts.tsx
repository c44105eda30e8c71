import type { JudgedTestView } from '../../judge/submission-tests.js';
import type { ReturnedFile } from '../../result.js';
import { downloadName, droppedText, fileShown, fileUrl, imageAlt, sizeText } from '../returned-files.js';
import { testLabel, verdictWords } from '../verdicts.js';
import { TableBox, TextPair } from './layout.js';

// Parts of a run's result that the submission page and the playground both show: the
// verdict of each judged test with where its output first differs from the expected
// one, and the files the program wrote under /box/out/ (PNG, JPEG and SVG as images
// from data: URLs, so an SVG's markup never enters the page; text up to 64 KB in a pre;
// every file a download link).

export function ReturnedFiles(p: { files: ReturnedFile[] | undefined; dropped?: { name: string; size: number }[] | undefined }) {
  const files = p.files ?? [];
  const dropped = p.dropped ?? [];
  if (files.length === 0 && dropped.length === 0) return null;
  return (
    <>
      <ul class="files">
        {files.map((f) => {
          const url = fileUrl(f);
          const shown = fileShown(f);
          const caption = (
            <p class="file-name">
              <a href={url} download={downloadName(f.name)}>
                {f.name}
              </a>
              {` · ${sizeText(f.size)}`}
            </p>
          );
          if (shown === 'image') {
            return (
              <li class="file">
                <img class="file-image" src={url} alt={imageAlt(f.name)} />
                {caption}
              </li>
            );
          }
          return (
            <li class="file">
              {caption}
              {shown === 'text' && (
                <pre class="file-text" tabIndex={0} aria-label={f.name}>
                  {Buffer.from(f.content, 'base64').toString('utf8')}
                </pre>
              )}
            </li>
          );
        })}
      </ul>
      {dropped.length > 0 && <p class="files-dropped">{droppedText(dropped)}</p>}
    </>
  );
}

const testName = (t: JudgedTestView, i: number) => testLabel(t.name, i);
const linesText = (lines: string[]) => (lines.length > 0 ? lines.join('\n') : '(nothing)');

/** Each judged test's verdict, score and checker's message; then, for each test whose output differs, the first lines that differ. */
export function JudgedTests(p: { tests: JudgedTestView[]; showData?: boolean }) {
  const differing = p.tests.map((t, i) => ({ t, i })).filter(({ t }) => t.diff !== null);
  // A multi-pass problem's tests: how many passes each took.
  const multiPass = p.tests.some((t) => t.passes !== undefined);
  return (
    <div class="judged">
      <TableBox label="Test verdicts">
        <table>
          <thead>
            <tr>
              <th scope="col">Test</th>
              <th scope="col">Verdict</th>
              {multiPass && (
                <th scope="col" class="num">
                  Passes
                </th>
              )}
              <th scope="col" class="num">Score</th>
              <th scope="col">Checker's message</th>
            </tr>
          </thead>
          <tbody>
            {p.tests.map((t, i) => (
              <tr data-test={testName(t, i)}>
                <th scope="row">{testName(t, i)}</th>
                <td data-field="verdict" class={t.verdict === 'accepted' ? 'ok' : t.verdict === 'skipped' ? 'muted' : 'bad'}>
                  {t.verdict ? verdictWords(t.verdict) : '—'}
                </td>
                {multiPass && (
                  <td class="num" data-field="passes">
                    {t.passes ?? '—'}
                  </td>
                )}
                <td class="num">{t.score === null ? '—' : String(Math.round(t.score * 1000) / 1000)}</td>
                <td>{t.checker_message ?? '—'}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </TableBox>
      {differing.map(({ t, i }) => (
        <section class="diff" aria-labelledby={`diff-${i}`} data-diff-of={testName(t, i)}>
          <h3 id={`diff-${i}`}>{`${testName(t, i)}: first difference at line ${t.diff!.line}`}</h3>
          <TextPair
            sides={[
              { label: 'Expected', class: 'diff-expected', ariaLabel: `${testName(t, i)}, expected from line ${t.diff!.line}`, text: linesText(t.diff!.expected) },
              { label: 'Found', class: 'diff-found', ariaLabel: `${testName(t, i)}, found from line ${t.diff!.line}`, text: linesText(t.diff!.found) },
            ]}
          />
        </section>
      ))}
    </div>
  );
}
