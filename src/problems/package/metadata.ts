import type { PackageFiles } from './files.js';
import type { ReportBuilder } from './report.js';

// The rest of a package, reported: problem.yaml's keys runbox does not need to judge, and
// the package's directories and files it does not read, each with the reason.

const YAML_READ = ['problem_format_version', 'name', 'type', 'validation', 'validator_flags', 'grading', 'constants'];
const YAML_IGNORED: Record<string, string> = {
  uuid: 'an identity for problem archives, not judged',
  version: 'the package author\'s version; runbox numbers its own versions',
  credits: 'shown with the statement, not judged',
  author: 'shown with the statement, not judged',
  source: 'shown with the statement, not judged',
  source_url: 'shown with the statement, not judged',
  license: 'shown with the statement, not judged',
  rights_owner: 'shown with the statement, not judged',
  embargo_until: 'a publication date, not judged',
  keywords: 'not judged',
  languages: 'submissions may use any compiler offered here',
  allow_file_writing: 'a submission\'s working directory is writable here',
  input_validator_flags: 'input validators are not run here (the test data is taken as valid)',
};

export function reportProblemYaml(yaml: Record<string, unknown>, report: ReportBuilder): void {
  for (const key of Object.keys(yaml)) {
    if (YAML_READ.includes(key)) report.read(`problem.yaml: ${key}`);
    else if (key === 'limits') continue;
    else report.ignore(`problem.yaml: ${key}`, YAML_IGNORED[key] ?? 'not a key runbox reads');
  }
}

const ROOT_IGNORED: Record<string, string> = {
  problem_statement: 'statements are not shown by the judge',
  statement: 'statements are not shown by the judge',
  solution: 'the solution description, not judged',
  attachments: 'files for solvers, not judged',
  input_validators: 'input validators are not run here (the test data is taken as valid)',
  input_format_validators: 'input validators are not run here (the test data is taken as valid)',
  static_validator: 'static validation is not run here',
  generators: 'generators are not run: the package\'s data/ is judged as it is',
  submissions: 'no example submission here in a language runbox offers (kept ones are judged by POST /api/v2/problems/{id}/verify)',
  input_visualizer: 'visualizers are not run here',
  output_visualizer: 'visualizers are not run here',
  include: 'no files for a language runbox offers',
  graders: 'grading: custom is not used by any group',
};

export function reportRoot(files: PackageFiles, report: ReportBuilder): void {
  for (const path of files.keys()) {
    const top = path.includes('/') ? `${path.slice(0, path.indexOf('/'))}/` : path;
    if (report.has(top) || report.has(path) || report.readBelow(top) || top === 'data/') continue;
    if (top === 'problem.yaml') report.read(top);
    else report.ignore(top, ROOT_IGNORED[top.replace(/\/$/, '')] ?? 'not part of the package format');
  }
}
