import type { PackageModel } from '../../problems/draft.js';
import { TableBox } from './layout.js';

// What the upload said of a package on the problem's page: its format and type, every
// key and path read, and every one ignored with why (nothing is dropped without a word).

export function PackageReport(p: { model: PackageModel }) {
  const { report, timing } = p.model;
  return (
    <section class="package-report" aria-labelledby="package-report">
      <h2 id="package-report">Package</h2>
      <p data-field="package-format">{`Format ${report.format}; type ${report.type.join(', ')}; ${timing.time_limit_stated ? `time limit stated (${timing.time_limit_source})` : 'no time limit stated'}.`}</p>
      <details>
        <summary>{`Read (${report.read.length})`}</summary>
        <ul class="mono" data-field="package-read">
          {report.read.map((k) => (
            <li>{k}</li>
          ))}
        </ul>
      </details>
      {report.ignored.length > 0 && (
        <details open>
          <summary>{`Ignored (${report.ignored.length})`}</summary>
          <TableBox label="Ignored keys and paths">
            <table>
              <thead>
                <tr>
                  <th scope="col">Key or path</th>
                  <th scope="col">Why</th>
                </tr>
              </thead>
              <tbody>
                {report.ignored.map((i) => (
                  <tr data-ignored={i.key}>
                    <th scope="row" class="mono">
                      {i.key}
                    </th>
                    <td>{i.reason}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </TableBox>
        </details>
      )}
    </section>
  );
}
