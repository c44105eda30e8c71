import { expect } from 'chai';
import { cpuRlimitSeconds, RUN_LIMITS, VERDICT_CODES } from '../../src/limits.js';
import { outputText } from '../../src/util/output-text.js';
import { placeSource, sourceText } from '../../src/program/source-file.js';
import { buildProgram } from '../../src/runner/build.js';
import { returnedFiles } from '../../src/runner/returned-files.js';
import { executionFields, NotStarted, resultLimits } from '../../src/runner/verdict.js';
import type { SandboxOutcome } from '../../src/sandbox/spec.js';

function outcome(over: Partial<SandboxOutcome>): SandboxOutcome {
  return {
    status: 'exited',
    exitCode: 0,
    signal: null,
    stdout: Buffer.alloc(0),
    stderr: Buffer.alloc(0),
    stdoutTruncated: false,
    stderrTruncated: false,
    outputBytes: 0,
    cpuMs: 12,
    wallMs: 34,
    memoryPeakBytes: 2048 * 1024,
    endedAtNs: 0n,
    collected: [],
    omitted: [],
    ...over,
  };
}

describe('runner: sandbox outcome to result fields', () => {
  it('exit 0 is success, with cpu and wall seconds and peak memory in KB', () => {
    const f = executionFields(outcome({ stdout: Buffer.from('hi\n') }));
    expect(f).to.deep.equal({
      status: 'success',
      output: 'hi\n',
      error: '',
      exit_code: 0,
      signal: null,
      time: 0.012,
      total: 0.034,
      memory: 2048,
      limit_exceeded: null,
      truncated: false,
    });
  });

  it('a timeout says which limit it was (cpu or wall); every other status none', () => {
    expect(executionFields(outcome({ status: 'timeout', exitCode: 137, signal: 9, limitExceeded: 'cpu' }))).to.include({ status: 'timeout', limit_exceeded: 'cpu' });
    expect(executionFields(outcome({ status: 'timeout', exitCode: 137, signal: 9, limitExceeded: 'wall' }))).to.include({ status: 'timeout', limit_exceeded: 'wall' });
    expect(executionFields(outcome({ status: 'memory_limit', exitCode: 137, signal: 9 })).limit_exceeded).to.equal(null);
    // A program that ends by SIGXCPU itself is reported by the sandbox as a timeout; a signaled outcome is never one.
    expect(executionFields(outcome({ status: 'signaled', exitCode: 152, signal: 24 }))).to.include({ status: 'runtime_error', limit_exceeded: null });
  });

  it('shows a run stage\'s limits: its own where lowered, else the service\'s', () => {
    expect(resultLimits({ cpuTimeMs: 1000, timeoutMs: 2500 })).to.deep.equal({ time: 1, wall_time: 2.5, memory: RUN_LIMITS.memoryBytes / 1024 });
    expect(resultLimits(undefined)).to.deep.equal({ time: RUN_LIMITS.cpuTimeMs / 1000, wall_time: RUN_LIMITS.timeoutMs / 1000, memory: RUN_LIMITS.memoryBytes / 1024 });
  });

  it('a CPU-time rlimit well past a lowered CPU time (a backstop), the service\'s otherwise', () => {
    expect(cpuRlimitSeconds(1000)).to.deep.equal({ soft: 3, hard: 4 });
    expect(cpuRlimitSeconds(5000)).to.deep.equal({ soft: 9, hard: 10 });
    expect(cpuRlimitSeconds(100)).to.deep.equal({ soft: 2, hard: 3 });
    expect(cpuRlimitSeconds(RUN_LIMITS.cpuTimeMs)).to.deep.equal({ soft: RUN_LIMITS.cpuTimeRlimitSeconds, hard: RUN_LIMITS.cpuTimeRlimitSeconds });
    for (const ms of [100, 1000, 1500, 5000, 30_000]) expect(cpuRlimitSeconds(ms).soft * 1000).to.be.greaterThan(ms + 900);
  });

  it('gives times in seconds to the microsecond, without float noise', () => {
    const f = executionFields(outcome({ cpuMs: 43.117000000000004, wallMs: 0.1 + 0.2 }));
    expect(f.time).to.equal(0.043117);
    expect(f.total).to.equal(0.0003);
    expect(JSON.stringify({ t: executionFields(outcome({ cpuMs: 1.2345678, wallMs: 70.00000001 })).time })).to.equal('{"t":0.001235}');
  });

  it('a non-zero exit or a signal is a runtime_error, even 137, 153 or 71 chosen by the program itself', () => {
    for (const code of [1, VERDICT_CODES.killedExitCode, VERDICT_CODES.outputLimitExitCode, VERDICT_CODES.processLimitExitCode]) {
      expect(executionFields(outcome({ exitCode: code })).status, `exit ${code}`).to.equal('runtime_error');
    }
    const sig = executionFields(outcome({ status: 'signaled', exitCode: 139, signal: 11 }));
    expect(sig).to.include({ status: 'runtime_error', exit_code: 139, signal: 11 });
  });

  it('forced stops take the sandbox verdict and its reported codes', () => {
    const oom = executionFields(outcome({ status: 'memory_limit', exitCode: 137, signal: 9, memoryPeakBytes: null, cpuMs: null }));
    expect(oom).to.include({ status: 'memory_limit', exit_code: 137, signal: 9, memory: null, time: null });
    expect(executionFields(outcome({ status: 'timeout', exitCode: 137, signal: 9 })).status).to.equal('timeout');
    const flood = executionFields(outcome({ status: 'output_limit', exitCode: 153, signal: 25, stdoutTruncated: true }));
    expect(flood).to.include({ status: 'output_limit', exit_code: 153, signal: 25, truncated: true });
    expect(executionFields(outcome({ status: 'process_limit', exitCode: 71 })).status).to.equal('process_limit');
  });

  it('truncated is set when either stream was cut', () => {
    expect(executionFields(outcome({ stderrTruncated: true })).truncated).to.equal(true);
  });

  it('a sandbox internal error means the job was not run', () => {
    expect(() => executionFields(outcome({ status: 'internal_error', exitCode: null, diagnostic: 'launcher failed' }))).to.throw(NotStarted);
  });
});

describe('runner: output text', () => {
  it('keeps valid UTF-8 and replaces invalid bytes and NUL with U+FFFD', () => {
    expect(outputText(Buffer.from('héllo ✓\n'))).to.equal('héllo ✓\n');
    expect(outputText(Buffer.from([0x61, 0xff, 0x62, 0x00, 0x63]))).to.equal('a\uFFFDb\uFFFDc');
    // A multi-byte character cut by the 64 KB cap.
    expect(outputText(Buffer.from('✓').subarray(0, 2))).to.equal('\uFFFD');
  });
});

describe('runner: source file placement', () => {
  const java = { source: 'Main.java', sourceFromPublicClass: true };

  it('names the file after the single public class', () => {
    const code = 'import java.util.*;\n\npublic final class Solution {\n  public static void main(String[] a) {}\n}\nclass Helper {}\n';
    expect(placeSource(java, code)).to.deep.equal({ fileName: 'Solution.java', main: 'Solution' });
  });

  it('ignores public class in comments and strings', () => {
    const code = '// public class Nope\n/* public class Nah */\nclass A { String s = "public class Str"; }\npublic class Real {}\n';
    expect(placeSource(java, code).fileName).to.equal('Real.java');
  });

  it('falls back to the recipe name without exactly one public class', () => {
    expect(placeSource(java, 'class Main {}')).to.deep.equal({ fileName: 'Main.java', main: 'Main' });
    expect(placeSource(java, 'public class A {}\npublic class B {}')).to.deep.equal({ fileName: 'Main.java', main: 'Main' });
  });

  it('uses the recipe name for other languages', () => {
    expect(placeSource({ source: 'main.c' }, 'public class X {}')).to.deep.equal({ fileName: 'main.c', main: 'main' });
  });

  it('writes an empty first line where the interpreter skips one, unless the program starts with #!', () => {
    const escript = { skipsFirstLine: true };
    expect(sourceText(escript, 'main(_) -> ok.\n')).to.equal('\nmain(_) -> ok.\n');
    expect(sourceText(escript, '')).to.equal('\n');
    expect(sourceText(escript, '#!/usr/bin/env escript\nmain(_) -> ok.\n')).to.equal('#!/usr/bin/env escript\nmain(_) -> ok.\n');
    expect(sourceText({}, 'main(_) -> ok.\n')).to.equal('main(_) -> ok.\n');
  });

  it('a compile stage that left a file named outside UTF-8 builds; one past the bounds or with its files lost does not', async () => {
    const plan = {
      main: 'run',
      files: [],
      compile: { argv: ['/bin/bash', 'compile'], files: [], dirs: [], collect: ['./'], required: [] },
      run: { argv: ['/bin/bash', 'run'], files: [], dirs: [], collect: [] },
    };
    const made = { name: 'run', mode: 0o644, content: Buffer.from('echo hi') };
    const built = await buildProgram(plan, async () => outcome({ collected: [made], omitted: [{ name: '\\xff', size: 1, reason: 'name' }] }));
    expect(built.ok).to.equal(true);
    const over = await buildProgram(plan, async () => outcome({ collected: [made], omitted: [{ name: 'big', size: 1, reason: 'limits' }] }));
    expect(over.ok).to.equal(false);
    const lost = await buildProgram(plan, async () => outcome({ collected: [made], collectLost: 'truncated file content' }));
    expect(lost.ok === false && lost.problems).to.deep.equal(['the files compilation produced could not all be brought back']);
  });

  it('returned files list a name outside UTF-8 with its reason; files lost after the end make files_truncated', () => {
    const r = returnedFiles(outcome({ collected: [{ name: 'out/a', mode: 0o644, content: Buffer.from('a') }], omitted: [{ name: 'out/\\xff', size: 3, reason: 'name' }] }));
    expect(r.files_dropped).to.deep.equal([{ name: '\\xff', size: 3, reason: 'name' }]);
    expect(r.files_truncated).to.equal(true);
    expect(returnedFiles(outcome({ collectLost: 'truncated file content' }))).to.deep.equal({ files: [], files_truncated: true, files_dropped: [] });
  });
});
