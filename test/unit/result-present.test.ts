import { expect } from 'chai';
import { presentResult, RESULT_FIELD_ORDER, type RunResult } from '../../src/result.js';
import { successResult } from '../helpers/run-result.js';

describe('result presentation', () => {
  it('a result stored before limit_exceeded was reported shows it as null, in its place, at the top and in each test', () => {
    const { limit_exceeded: _dropped, ...old } = successResult('r1');
    const test = { status: 'success', output: 'a', error: '', exit_code: 0, signal: null, time: 0.01, total: 0.02, memory: 10, truncated: false };
    const stored = { ...old, tests: [test] } as unknown as RunResult;
    const shown = JSON.parse(presentResult(stored)) as Record<string, unknown> & { tests: Record<string, unknown>[] };
    expect(shown['limit_exceeded']).to.equal(null);
    expect(Object.keys(shown)).to.deep.equal(RESULT_FIELD_ORDER.filter((k) => k in shown));
    expect(Object.keys(shown.tests[0]!)).to.deep.equal(['status', 'output', 'error', 'exit_code', 'signal', 'time', 'total', 'memory', 'limit_exceeded', 'truncated']);
    expect(shown.tests[0]!['limit_exceeded']).to.equal(null);
    // A result that has it keeps it.
    expect(JSON.parse(presentResult(successResult('r2', { status: 'timeout', limit_exceeded: 'wall' })))['limit_exceeded']).to.equal('wall');
  });
});

describe('result presentation of null fields', () => {
  it('keeps every null field (signal, compile_output, extra_params) as null', () => {
    const shown = JSON.parse(presentResult(successResult('r3'))) as Record<string, unknown>;
    expect([shown['signal'], shown['compile_output'], shown['extra_params'], shown['limit_exceeded']]).to.deep.equal([null, null, null, null]);
  });
});
