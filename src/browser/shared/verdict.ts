import { verdictText } from '../../portal/verdicts.js';

// A run's result as the widget and the playground read it, and the line under the
// output once it has ended (src/portal/verdicts.ts: the same words as the portal's pages).

export interface ReturnedFile {
  name: string;
  size: number;
  mime: string;
  /** Base64. */
  content: string;
}

export interface RunResult {
  status: string;
  output?: string;
  error?: string;
  compile_output?: string | null;
  exit_code?: number | null;
  time?: number | null;
  total?: number | null;
  memory?: number | null;
  truncated?: boolean;
  verdict?: string;
  score?: number;
  checker_message?: string | null;
  files?: ReturnedFile[];
  files_truncated?: boolean;
  files_dropped?: { name: string; size: number; reason?: string }[];
  /** A multi-test (or stored problem's) run: each test the asker may see. */
  tests?: { name?: string; status: string; verdict?: string }[];
}

export { verdictText };
