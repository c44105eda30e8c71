import { expect } from 'chai';
import { PROBLEM_LIMITS } from '../../src/limits.js';
import { ProblemInputError } from '../../src/problems/draft.js';
import { parsePackageYaml, yamlDepth } from '../../src/problems/yaml.js';

// A package's YAML is bounded before the parser sees it: its size, and its nesting as
// counted on the lexer's tokens (flow collections, block levels and the indicators on a
// line), with brackets inside quoted strings, comments and block scalars not counted.

const { yamlMaxDepth: MAX_DEPTH, metadataFileMaxBytes: MAX_BYTES } = PROBLEM_LIMITS;

function refusal(text: string): ProblemInputError {
  try {
    parsePackageYaml(Buffer.from(text), 'problem.yaml');
  } catch (err) {
    expect(err).to.be.instanceOf(ProblemInputError);
    return err as ProblemInputError;
  }
  throw new Error('the YAML was taken');
}

/** `depth` block levels: each line one key, indented one more space than the last. */
const blockOf = (depth: number) => Array.from({ length: depth }, (_, i) => `${' '.repeat(i)}k${i}:`).join('\n') + ' x\n';

describe('problems: package YAML bounds', () => {
  it('a real problem.yaml is a few levels deep and parses', () => {
    const text = [
      '# A Kattis problem',
      'name: {en: "Sum [easy]", sv: Summa}',
      'source: NCPC',
      'validation: custom',
      'keywords: [math, "a [b"]',
      'limits:',
      '  time_limit: 2',
      '  memory: 256',
      'validator_flags: float_tolerance 1e-6',
      '',
    ].join('\n');
    expect(yamlDepth(text)).to.equal(3);
    expect(parsePackageYaml(Buffer.from(text), 'problem.yaml')).to.deep.include({ source: 'NCPC', keywords: ['math', 'a [b'], limits: { time_limit: 2, memory: 256 } });
  });

  it('deep flow collections: [ and { each open a level; their ends close it', () => {
    expect(yamlDepth('[]')).to.equal(2);
    expect(yamlDepth(`name: ${'['.repeat(10)}${']'.repeat(10)}`)).to.equal(12);
    expect(yamlDepth(`a: ${'{b: '.repeat(5)}1${'}'.repeat(5)}`)).to.equal(7);
    expect(yamlDepth('a: [[1], [2], [3]]')).to.equal(4);
    // Unclosed ones count as open.
    expect(yamlDepth(`a: ${'['.repeat(100)}`)).to.equal(102);
  });

  it('deep block levels: indentation, and compact indicators on one line', () => {
    expect(yamlDepth('a: 1\nb: 2\nc: 3\n')).to.equal(2);
    expect(yamlDepth(blockOf(10))).to.equal(10 + 1);
    // Back to the left: the levels close.
    expect(yamlDepth(`${blockOf(5)}z: 1\n`)).to.equal(6);
    expect(yamlDepth('- - - - x\n')).to.equal(4 + 1);
    expect(yamlDepth('? ? ? x\n')).to.equal(3 + 1);
  });

  it('brackets in quoted strings, comments, block scalars and plain scalars are not counted', () => {
    const deep = '['.repeat(1000);
    expect(yamlDepth(`name: "${deep}"\n`)).to.equal(2);
    expect(yamlDepth(`name: '${deep} it''s'\n`)).to.equal(2);
    expect(yamlDepth(`name: x # ${deep}\n# ${deep}\n`)).to.equal(2);
    expect(yamlDepth(`name: |\n  ${deep}\n  don't\nb: 1\n`)).to.equal(2);
    expect(yamlDepth(`name: a${deep}\n`)).to.equal(2);
    // An apostrophe inside a plain scalar opens no string that would hide what follows.
    expect(yamlDepth(`name: don't\nb: ${'['.repeat(20)}\n`)).to.equal(22);
    expect(parsePackageYaml(Buffer.from(`name: "${deep}"\n`), 'problem.yaml')).to.deep.equal({ name: deep });
  });

  it(`the depth bound is exact: ${MAX_DEPTH} levels parse, ${MAX_DEPTH + 1} are refused before parsing`, () => {
    const flow = (n: number) => `${'['.repeat(n - 1)}${']'.repeat(n - 1)}`;
    expect(yamlDepth(flow(MAX_DEPTH))).to.equal(MAX_DEPTH);
    expect(parsePackageYaml(Buffer.from(flow(MAX_DEPTH)), 'problem.yaml')).to.be.an('array');
    const err = refusal(flow(MAX_DEPTH + 1));
    expect(err.code).to.equal('invalid_package');
    expect(err.message).to.equal(`problem.yaml is nested ${MAX_DEPTH + 1} levels deep; a package's YAML may nest at most ${MAX_DEPTH} (flow [ ] and { }, and block levels, together)`);
    expect(yamlDepth(blockOf(MAX_DEPTH - 1))).to.equal(MAX_DEPTH);
    expect(parsePackageYaml(Buffer.from(blockOf(MAX_DEPTH - 1)), 'problem.yaml')).to.be.an('object');
    expect(refusal(blockOf(MAX_DEPTH)).message).to.match(new RegExp(`^problem.yaml is nested ${MAX_DEPTH + 1} levels deep`));
    // Within the size bound, as deep as it can be: refused, not parsed.
    expect(refusal(`name: ${'['.repeat(MAX_BYTES - 6)}`).message).to.match(/^problem.yaml is nested \d+ levels deep/);
  });

  it(`the size bound is exact: ${MAX_BYTES} bytes parse, one more is refused`, () => {
    const sized = (n: number) => `name: x\n#${'.'.repeat(n - 'name: x\n#\n'.length)}\n`;
    expect(Buffer.byteLength(sized(MAX_BYTES))).to.equal(MAX_BYTES);
    expect(parsePackageYaml(Buffer.from(sized(MAX_BYTES)), 'problem.yaml')).to.deep.equal({ name: 'x' });
    expect(refusal(sized(MAX_BYTES + 1)).message).to.equal(`problem.yaml is ${MAX_BYTES + 1} bytes; a package's YAML file may have at most ${MAX_BYTES}`);
    // The package that took a process down: 200,000 [ and as many ].
    expect(refusal(`name: ${'['.repeat(200_000)}${']'.repeat(200_000)}`).message).to.equal(`problem.yaml is 400006 bytes; a package's YAML file may have at most ${MAX_BYTES}`);
  });
});
