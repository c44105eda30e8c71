import { expect } from 'chai';
import { availabilityOf, type CompilerAvailability } from '../../src/compilers/availability.js';
import { catalogue, compilerEntry } from '../../src/compilers/catalogue.js';
import { judge0Run, Judge0FieldErrors } from '../../src/compat/judge0/request.js';
import { judge0Verdict } from '../../src/compat/judge0/statuses.js';
import { pistonJob } from '../../src/compat/piston/request.js';
import { pistonResponse } from '../../src/compat/piston/response.js';
import { findRuntime, pistonRuntimes, semverOf } from '../../src/compat/piston/runtimes.js';
import { shellWords } from '../../src/compat/judge0/shell-words.js';
import { RUN_LIMITS, STAGE_LIMIT_FLOORS, wallTimeMsFor } from '../../src/limits.js';
import { successResult } from '../helpers/run-result.js';

// The translation tables of the compatible APIs, on every verdict runbox has: what
// the end-to-end suites cannot provoke cheaply (memory and output limits, internal
// errors) is checked here from recorded results.

const installed: CompilerAvailability[] = [
  availabilityOf(compilerEntry('python-3.9.7')!, '3.9.2'),
  availabilityOf(compilerEntry('python-2.7.18')!, '2.7.18'),
  availabilityOf(compilerEntry('g++-9')!, '9.3.0'),
  availabilityOf(compilerEntry('openjdk-11')!, null),
];
const runtimes = pistonRuntimes(installed);

describe('Piston translation', () => {
  it('finds every runtime of the whole catalogue by *, its listed version and the ranges clients send (NASM\'s 2.16.01 too)', () => {
    const all = pistonRuntimes([...catalogue('').entries.values()].filter((e) => !e.retired).map((e) => availabilityOf(e, e.version)));
    expect(all.map((r) => r.version)).to.include('2.16.01');
    for (const rt of all) {
      const major = rt.version.split('.')[0]!;
      const best = (version: string) => findRuntime(all, rt.language, version);
      for (const version of ['*', 'x', rt.version, semverOf(rt.version)!, `${major}.x`, `^${major}`, `>=${major}`, `~${semverOf(rt.version)}`]) {
        expect(best(version), `${rt.compiler} ${version}`).to.not.equal(undefined);
      }
      expect(best(rt.version)!.compiler, rt.compiler).to.equal(all.find((o) => o.language === rt.language && o.version === rt.version)!.compiler);
    }
    expect(semverOf('2.16.01')).to.equal('2.16.1');
    expect(semverOf('2022.12')).to.equal('2022.12.0');
    expect(findRuntime(all, 'nasm', '2.16.1')?.compiler).to.equal('nasm-2.16');
  });

  it('finds runtimes by name or alias and semver range, the highest first; uninstalled ones are absent', () => {
    expect(findRuntime(runtimes, 'python', '*')!.compiler).to.equal('python-3.9.7');
    expect(findRuntime(runtimes, 'python', '2.x')!.compiler).to.equal('python-2.7.18');
    expect(findRuntime(runtimes, 'py2', '*')!.compiler).to.equal('python-2.7.18');
    expect(findRuntime(runtimes, 'cpp', '9.3.0')!.compiler).to.equal('g++-9');
    expect(findRuntime(runtimes, 'python', 'not a range')).to.equal(undefined);
    expect(findRuntime(runtimes, 'java', '*')).to.equal(undefined);
  });

  it('lists the runtimes of one language together, highest version first, and picks the highest for *', () => {
    const py = compilerEntry('python-3.9.7')!;
    const newer = availabilityOf({ ...py, id: 'python-3.13', piston: { language: 'python', aliases: ['py3'] } }, '3.13.5');
    const list = pistonRuntimes([installed[0]!, installed[2]!, newer, installed[1]!]);
    expect(list.map((r) => `${r.language} ${r.version}`)).to.deep.equal(['python 3.13.5', 'python 3.9.2', 'python 2.7.18', 'c++ 9.3.0']);
    expect(findRuntime(list, 'python', '*')!.compiler).to.equal('python-3.13');
    expect(findRuntime(list, 'py3', '*')!.compiler).to.equal('python-3.13');
    expect(findRuntime(list, 'python', '3.9.x')!.compiler).to.equal('python-3.9.7');
    expect(findRuntime(list, 'python3.9', '*')!.compiler).to.equal('python-3.9.7');
  });

  it('clamps limits to runbox\'s and its floors; never above', () => {
    const job = pistonJob(
      { language: 'python', version: '*', files: [{ content: 'x' }], run_timeout: 1e9, compile_timeout: 1, run_memory_limit: 1e15, compile_memory_limit: -1 },
      runtimes,
    );
    expect(job.run.runOptions).to.deep.equal({
      run: { timeout_ms: RUN_LIMITS.timeoutMs, memory_bytes: RUN_LIMITS.memoryBytes },
      compile: { timeout_ms: STAGE_LIMIT_FLOORS.timeoutMs },
    });
  });

  it('maps every runbox verdict to a status letter', () => {
    const rt = { language: 'python', version: '3.9.2' };
    const run = (more: Parameters<typeof successResult>[1]) => pistonResponse(successResult('x', more), rt, false).run!;
    expect(run({}).status).to.equal(null);
    expect(run({ status: 'runtime_error', exit_code: 1 })).to.include({ status: 'RE', code: 1 });
    expect(run({ status: 'runtime_error', exit_code: 139, signal: 11 })).to.include({ status: 'SG', signal: 'SIGSEGV' });
    expect(run({ status: 'timeout', signal: 9, exit_code: 137, limit_exceeded: 'cpu' })).to.include({ status: 'TO', signal: 'SIGKILL', message: 'Time limit exceeded' });
    expect(run({ status: 'timeout', signal: 9, exit_code: 137, limit_exceeded: 'wall' })).to.include({ status: 'TO', signal: 'SIGKILL', message: 'Time limit exceeded (wall clock)' });
    expect(run({ status: 'memory_limit', signal: 9 })).to.include({ status: 'SG', signal: 'SIGKILL', message: 'Memory limit exceeded' });
    expect(run({ status: 'output_limit', stdout_truncated: true })).to.include({ status: 'OL' });
    expect(run({ status: 'output_limit', stderr_truncated: true })).to.include({ status: 'EL' });
    expect(run({ status: 'internal_error', error: 'boom' })).to.include({ status: 'XX', message: 'boom' });
    expect(run({ memory: 2, time: 0.25, total: 0.5 })).to.include({ memory: 2048, cpu_time: 250, wall_time: 500 });
  });
});

describe('Judge0 translation', () => {
  it('splits command_line_arguments and compiler_options as bash splits words (quotes together, no expansion)', () => {
    expect(shellWords(`a "b c" 'd e' f\\ g  *.txt`)).to.deep.equal(['a', 'b c', 'd e', 'f g', '*.txt']);
    expect(shellWords('-O2  -DX=1 # a comment')).to.deep.equal(['-O2', '-DX=1']);
    expect(shellWords('')).to.deep.equal([]);
  });

  it('refuses a compiler option the compiler does not allow, naming it; options to an interpreter are dropped as Judge0 does', async () => {
    try {
      await judge0Run({ source_code: 'int main(){}', language_id: 50, compiler_options: '-O2 -fplugin=x' }, false);
      expect.fail('no error');
    } catch (err) {
      expect((err as Judge0FieldErrors).fields['compiler_options']![0]).to.match(/^"-fplugin=x" is never allowed: it names a plugin/);
    }
    const { run } = await judge0Run({ source_code: 'int main(){}', language_id: 50, compiler_options: '-O2 "-DX=ab"', command_line_arguments: "1 '2 3' $HOME;x" }, false);
    expect(run.runOptions).to.deep.equal({ args: ['1', '2 3', 'HOMEx'], compiler_options: ['-O2', '-DX=ab'] });
    expect((await judge0Run({ source_code: 'print(1)', language_id: 71, compiler_options: '-O' }, false)).run.runOptions).to.equal(null);
  });

  it('names every runbox verdict with a Judge0 status', () => {
    const id = (more: Parameters<typeof successResult>[1], expected: string | null = null) => judge0Verdict(successResult('x', more), expected).status.id;
    expect(id({})).to.equal(3);
    expect(id({ output: 'a \nb\n\n' }, 'a\nb')).to.equal(3);
    expect(id({ output: 'a\n' }, 'b')).to.equal(4);
    expect(id({ output: '' }, '')).to.equal(3);
    expect(id({ status: 'compile_error' })).to.equal(6);
    expect(id({ status: 'timeout' })).to.equal(5);
    expect(judge0Verdict(successResult('x', { status: 'timeout', limit_exceeded: 'cpu' }), null).message).to.equal('Time limit exceeded');
    expect(judge0Verdict(successResult('x', { status: 'timeout', limit_exceeded: 'wall' }), null).message).to.equal('Time limit exceeded (wall clock)');
    expect(id({ status: 'runtime_error', signal: 11 })).to.equal(7);
    expect(id({ status: 'runtime_error', signal: 25 })).to.equal(8);
    expect(id({ status: 'runtime_error', signal: 8 })).to.equal(9);
    expect(id({ status: 'runtime_error', signal: 6 })).to.equal(10);
    expect(id({ status: 'runtime_error', exit_code: 1 })).to.equal(11);
    expect(id({ status: 'runtime_error', signal: 15 })).to.equal(12);
    expect(id({ status: 'output_limit', signal: 25 })).to.equal(8);
    expect(id({ status: 'memory_limit' })).to.equal(12);
    expect(id({ status: 'internal_error' })).to.equal(13);
  });

  it('collects every field error, as Rails validations do', async () => {
    try {
      await judge0Run({ source_code: '', language_id: 'x', memory_limit: 'lots', enable_network: true }, false);
      expect.fail('no error');
    } catch (err) {
      expect(err).to.be.instanceOf(Judge0FieldErrors);
      expect((err as Judge0FieldErrors).fields).to.deep.equal({
        source_code: ["can't be blank"],
        language_id: ["language with id x doesn't exist"],
        memory_limit: ['is not a number'],
        enable_network: ['this option cannot be enabled'],
      });
    }
  });

  it('takes cpu_time_limit as the run\'s CPU time and wall_time_limit as its wall-clock limit (else runbox\'s rule beside the CPU time), clamped; memory in KB', async () => {
    const { run } = await judge0Run({ source_code: 'x', language_id: 71, cpu_time_limit: 2, cpu_extra_time: 0.5, wall_time_limit: 10, memory_limit: 65536 }, false);
    expect(run.runOptions).to.deep.equal({ run: { cpu_ms: 2000, timeout_ms: 10_000, memory_bytes: 64 * 1024 * 1024 } });
    const cpuOnly = await judge0Run({ source_code: 'x', language_id: 71, cpu_time_limit: 5 }, false);
    expect(cpuOnly.run.runOptions).to.deep.equal({ run: { cpu_ms: 5000, timeout_ms: wallTimeMsFor(5000) } });
    expect(wallTimeMsFor(5000)).to.be.lessThan(10_000);
    const big = await judge0Run({ source_code: 'x', language_id: 71, wall_time_limit: 1000, memory_limit: 1e12 }, false);
    expect(big.run.runOptions).to.deep.equal({ run: { timeout_ms: RUN_LIMITS.timeoutMs, memory_bytes: RUN_LIMITS.memoryBytes } });
  });
});
