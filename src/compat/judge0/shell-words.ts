import { parse } from 'shell-quote';

// Words of a Judge0 command line as bash splits them in the script Judge0 writes
// (`run_cmd <arguments>`): quotes keep words together and go, backslashes escape. Judge0
// has already removed $ & ; < > | and backquotes, so no expansion or other command is
// left; a glob stays the word it is written as, and a comment ends the line.

export function shellWords(text: string): string[] {
  const words: string[] = [];
  for (const token of parse(text)) {
    if (typeof token === 'string') words.push(token);
    else if ('comment' in token) break;
    else if ('pattern' in token) words.push(token.pattern);
    else if ('op' in token) words.push(token.op);
  }
  return words;
}
