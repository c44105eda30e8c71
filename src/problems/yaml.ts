import { CST, Lexer, parse } from 'yaml';
import { PROBLEM_LIMITS } from '../limits.js';
import { ProblemInputError } from './draft.js';

// A package's YAML (problem.yaml), which comes from the client. The parser recurses once
// per nesting level, and a small document nested deeply enough (200,000 `[`) does not
// throw: the process aborts out of memory. So the text is bounded in size and its depth
// counted before it is parsed, on the tokens of yaml's own lexer: a loop with a counter
// whose quoted strings, comments and block scalars are exactly the parser's (no second
// reading of YAML to disagree with the first), linear and cheap at this size.

const bad = (message: string) => new ProblemInputError(message, 'invalid_package');

/**
 * The deepest nesting of YAML text: at each token, the flow collections open, plus the
 * block indentation levels open (a line indented more than the one above opens one),
 * plus the block indicators (`-`, `?`, `:`) already on its line (`- - x` nests twice).
 * Within a small factor of the depth the parser reaches (a block sequence may sit at its
 * mapping's own indentation, and a flow sequence's `a: b` is a mapping of its own, so
 * that can be up to about twice this), which is all the bound needs: the parser's
 * recursion runs out of stack some hundreds of levels deep.
 */
export function yamlDepth(text: string): number {
  let max = 0;
  let flow = 0;
  let inline = 0;
  const indents: number[] = [];
  let lineStart = true;
  let indent = 0;
  let scalarSource = false;
  const content = () => {
    if (lineStart && flow === 0) {
      while (indents.length > 0 && indents.at(-1)! > indent) indents.pop();
      if (indents.length === 0 || indents.at(-1)! < indent) indents.push(indent);
    }
    lineStart = false;
  };
  const reach = () => {
    max = Math.max(max, indents.length + inline + flow);
  };
  for (const token of new Lexer().lex(text)) {
    if (scalarSource) {
      // The source of a scalar (plain or block), which may run over several lines.
      scalarSource = false;
      if (token.endsWith('\n')) {
        lineStart = true;
        indent = 0;
        inline = 0;
      }
      continue;
    }
    switch (CST.tokenType(token)) {
      case 'newline':
        lineStart = true;
        indent = 0;
        inline = 0;
        break;
      case 'space':
        if (lineStart) indent = token.length;
        break;
      case 'doc-start':
      case 'doc-end':
        indents.length = 0;
        flow = 0;
        inline = 0;
        break;
      case 'flow-map-start':
      case 'flow-seq-start':
        content();
        flow++;
        reach();
        break;
      case 'flow-map-end':
      case 'flow-seq-end':
        flow = Math.max(0, flow - 1);
        break;
      case 'flow-error-end':
        flow = 0;
        break;
      case 'seq-item-ind':
      case 'explicit-key-ind':
      case 'map-value-ind':
        content();
        if (flow === 0) inline++;
        reach();
        break;
      case 'scalar':
        content();
        reach();
        scalarSource = true;
        break;
      case 'comment':
      case 'byte-order-mark':
      case 'doc-mode':
        break;
      default:
        // Quoted scalars, anchors, tags, aliases, block scalar headers, commas.
        content();
        reach();
    }
  }
  return max;
}

/** A package's YAML file as a value, within the size and depth bounds; throws ProblemInputError naming the file. */
export function parsePackageYaml(bytes: Buffer, file: string): unknown {
  const { metadataFileMaxBytes: maxBytes, yamlMaxDepth: maxDepth } = PROBLEM_LIMITS;
  if (bytes.length > maxBytes) throw bad(`${file} is ${bytes.length} bytes; a package's YAML file may have at most ${maxBytes}`);
  const text = bytes.toString('utf8');
  const depth = yamlDepth(text);
  if (depth > maxDepth) throw bad(`${file} is nested ${depth} levels deep; a package's YAML may nest at most ${maxDepth} (flow [ ] and { }, and block levels, together)`);
  try {
    // Aliases bounded: a few lines of YAML must not expand into gigabytes.
    return parse(text, { maxAliasCount: 100 });
  } catch (err) {
    throw bad(`${file} is not valid YAML: ${(err as Error).message.split('\n')[0]}`);
  }
}
