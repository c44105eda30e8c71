import { expect } from 'chai';
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { PROJECT_ROOT } from '../../src/util/paths.js';

// Logs are JSON lines when stdout is not a terminal (systemd, pipes, files), readable
// lines on a terminal. The terminal is a real pseudo-terminal from util-linux script(1).

const program = `
  const { createLogger } = await import(${JSON.stringify(join(PROJECT_ROOT, 'dist/src/log.js'))});
  const log = createLogger({ RUNBOX_LOG_LEVEL: 'info' }, 'runbox-test');
  log.child({ submission: 'abc' }).info({ slot: 2 }, 'job finished');
  log.debug('below the level');
  log.error({ err: new Error('boom') }, 'could not finish');
`;

function run(file: string, args: string[]): Promise<{ code: number; stdout: string }> {
  return new Promise((resolve) => {
    execFile(file, args, { env: { ...process.env, TERM: 'xterm' } }, (err, stdout) => resolve({ code: err ? 1 : 0, stdout }));
  });
}

describe('logs', () => {
  it('are one JSON object per line when stdout is not a terminal', async () => {
    const { code, stdout } = await run(process.execPath, ['--input-type=module', '-e', program]);
    expect(code).to.equal(0);
    const lines = stdout.trim().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(lines.map((l) => [l.level, l.name, l.msg])).to.deep.equal([
      [30, 'runbox-test', 'job finished'],
      [50, 'runbox-test', 'could not finish'],
    ]);
    expect(lines[0]).to.include({ submission: 'abc', slot: 2 });
    expect(lines[0]!.time).to.match(/^\d{4}-\d\d-\d\dT/);
    expect((lines[1]!.err as { message: string }).message).to.equal('boom');
  });

  it('are readable lines on a terminal', async function () {
    const probe = await run('script', ['--version']);
    if (probe.code !== 0) {
      console.log('      SKIPPED: script(1) from util-linux is not installed; no pseudo-terminal to test with');
      this.skip();
    }
    const inner = `${process.execPath} --input-type=module -e ${JSON.stringify(program.replace(/\n/g, ' '))}`;
    const { code, stdout } = await run('script', ['-qfec', inner, '/dev/null']);
    expect(code).to.equal(0);
    const plain = stdout.replace(/\u001b\[[0-9;]*m/g, '').replace(/\r/g, '');
    const lines = plain.split('\n').filter((l) => l.trim());
    expect(lines.some((l) => l.trim().startsWith('{"level"'))).to.equal(false);
    expect(lines[0]).to.match(/^\[\d\d:\d\d:\d\d\.\d{3}\] INFO \(runbox-test\): job finished \{"submission":"abc","slot":2\}$/);
    expect(lines[1]).to.match(/^\[\d\d:\d\d:\d\d\.\d{3}\] ERROR \(runbox-test\): could not finish/);
    expect(plain).to.include('Error: boom');
    expect(plain).to.not.include('below the level');
  });
});
