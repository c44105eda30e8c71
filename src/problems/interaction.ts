import { REQUEST_LIMITS } from '../limits.js';
import { ProblemInputError, type DraftTest } from './draft.js';
import type { ZipFileEntry } from './zip.js';

// A package's data/sample/NAME.interaction: how the sample NAME of an interactive (or
// multi-pass) problem goes, shown instead of its input and answer, as problemtools shows
// it: each line a turn, `<` what the program reads, `>` what it writes; in a multi-pass
// problem a `---` line between passes (a non-interactive pass: its `<` lines are the
// input, its `>` lines the output). Kept with the sample test, shown, never judged.

export interface InteractionLine {
  /** `<`: the program reads it (the judge's side wrote it); `>`: the program writes it. */
  from: 'judge' | 'program';
  text: string;
}

/** An interaction's passes (one unless the problem is multi-pass), or a message saying which line is wrong. */
export function parseInteraction(text: string, multiPass: boolean): InteractionLine[][] | string {
  const passes: InteractionLine[][] = [[]];
  const lines = text.split('\n');
  if (lines[lines.length - 1] === '') lines.pop();
  for (const [i, line] of lines.entries()) {
    if (multiPass && line.startsWith('---')) {
      passes.push([]);
      continue;
    }
    if (line[0] !== '<' && line[0] !== '>') return `line ${i + 1} does not start with < or >${multiPass ? ' or ---' : ''}`;
    passes[passes.length - 1]!.push({ from: line[0] === '<' ? 'judge' : 'program', text: line.slice(1).replace(/\r$/, '') });
  }
  return passes;
}

/** Each sample's .interaction onto its test; throws ProblemInputError (one without its sample, one in a problem that is not interactive, a line that is no turn). */
export async function readInteractions(files: Map<string, ZipFileEntry>, tests: DraftTest[], kind: { interactive: boolean; multiPass: boolean }): Promise<void> {
  // Only a sample's is shown (problemtools reads data/sample/*.interaction alone).
  const paths = [...files.keys()].filter((p) => p.startsWith('data/sample/') && p.endsWith('.interaction')).sort();
  const bad = (message: string) => new ProblemInputError(message, 'invalid_package');
  for (const path of paths) {
    if (!kind.interactive && !kind.multiPass) throw bad(`${path}: the problem is neither interactive nor multi-pass, but has an interaction sample (problemtools refuses it too)`);
    const name = path.slice('data/'.length, -'.interaction'.length);
    const test = tests.find((t) => t.name === name);
    if (!test) throw bad(`${path} has no data/${name}.in beside it: an interaction is shown with its sample test`);
    const file = files.get(path)!;
    if (file.size > REQUEST_LIMITS.inputMaxBytes) throw bad(`${path} is ${file.size} bytes; an interaction shown with a sample may have at most ${REQUEST_LIMITS.inputMaxBytes}`);
    let text: string;
    try {
      text = new TextDecoder('utf-8', { fatal: true }).decode(await file.read());
    } catch {
      throw bad(`${path} is not UTF-8 text`);
    }
    if (text.includes('\u0000')) throw bad(`${path} holds a NUL character`);
    const parsed = parseInteraction(text, kind.multiPass);
    if (typeof parsed === 'string') throw bad(`${path}: ${parsed}`);
    test.interaction = text;
  }
}
