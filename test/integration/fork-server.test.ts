import { once } from 'node:events';
import { join } from 'node:path';
import { expect } from 'chai';
import { ForkServer, type ShimProcess, type StageIo, type StageStreams } from '../../src/sandbox/fork-server.js';
import { NATIVE_BUILD_DIR } from '../../src/util/paths.js';

// The fork server (native/forkserver.c) carries every stage's bytes: what it keeps, counts
// and reports is what a result shows. Driven here with plain shell children, no sandbox.

const SH = '/bin/sh';

function io(over: Partial<StageIo> = {}): StageIo {
  return {
    stdin: Buffer.alloc(0), stageIn: Buffer.alloc(0),
    keepBytes: 64 * 1024, floodBytes: 8 << 20, stageOutBytes: 1 << 20, logBytes: 4096,
    onFlood: () => {}, ...over,
  };
}

async function exitOf(p: ShimProcess): Promise<[number | null, NodeJS.Signals | null]> {
  if (!p.exited) await once(p, 'exit');
  return [p.exitCode, p.signalCode];
}

describe('fork server', function () {
  this.timeout(30_000);
  let server: ForkServer;
  before(() => {
    server = new ForkServer(join(NATIVE_BUILD_DIR, 'runbox-forkserver'));
  });
  after(() => server.close());

  const run = async (script: string, over: Partial<StageIo> = {}, argv = Buffer.alloc(0)): Promise<{ s: StageStreams; exit: [number | null, NodeJS.Signals | null] }> => {
    const p = await server.spawn(SH, ['-c', script]);
    if (argv.length > 0) p.launch(argv);
    const s = await p.run(io(over));
    return { s, exit: await exitOf(p) };
  };

  it('hands each pipe to the child: command line on 6, stdin on 0, stage-in on 3; stdout, stderr, stage-out on 4 and the log on 5 come back', async () => {
    const { s, exit } = await run('tr -d "\\000" <&6; echo; cat; echo err >&2; cat <&3 >&4; echo log >&5; exit 7', {
      stdin: Buffer.from('in\n'), stageIn: Buffer.from('stage'),
    }, Buffer.from('a\0b\0'));
    expect(s.stdout.toString()).to.equal('ab\nin\n');
    expect(s.stderr.toString()).to.equal('err\n');
    expect(s.stageOut.toString()).to.equal('stage');
    expect(s.log.toString()).to.equal('log\n');
    expect(exit).to.deep.equal([7, null]);
  });

  it('keeps the first keepBytes of each output stream, counts the rest, and streams only what it keeps', async () => {
    const chunks: string[] = [];
    const { s } = await run('printf 1234567890; printf abcdef >&2', { keepBytes: 4, onChunk: (name, b) => chunks.push(`${name}:${b.toString()}`) });
    expect(s.stdout.toString()).to.equal('1234');
    expect(s.stderr.toString()).to.equal('abcd');
    expect([s.stdoutTotal, s.stderrTotal]).to.deep.equal([10, 6]);
    expect(chunks.join('').replace(/stdout:|stderr:/g, '')).to.have.length(8);
    expect(chunks.filter((c) => c.startsWith('stdout:')).map((c) => c.slice(7)).join('')).to.equal('1234');
  });

  it('reports a flood once, past floodBytes across both streams, and reads on so the child is never blocked', async () => {
    let floods = 0;
    const { s, exit } = await run('head -c 300000 /dev/zero; head -c 300000 /dev/zero >&2', { floodBytes: 500_000, onFlood: () => floods++ });
    expect(floods).to.equal(1);
    expect(s.stdoutTotal + s.stderrTotal).to.equal(600_000);
    expect(exit).to.deep.equal([0, null]);
  });

  it('flags stage-out past its bound and keeps none of the excess', async () => {
    const { s } = await run('head -c 5000 /dev/zero >&4', { stageOutBytes: 4096 });
    expect(s.stageOutOverflow).to.equal(true);
    expect(s.stageOut.length).to.be.at.most(4096);
  });

  it('does not wait on a child that never reads its stdin', async () => {
    const { s, exit } = await run('echo done', { stdin: Buffer.alloc(4 << 20, 1), stageIn: Buffer.alloc(1 << 20, 2) });
    expect(s.stdout.toString()).to.equal('done\n');
    expect(exit).to.deep.equal([0, null]);
  });

  it('carries large stage-in and stage-out archives intact, both ways', async () => {
    const stageIn = Buffer.alloc(24 << 20);
    for (let i = 0; i < stageIn.length; i += 4096) stageIn.writeUInt32LE(i, i);
    const { s } = await run('cat <&3 >&4', { stageIn, stageOutBytes: 64 << 20 });
    expect(s.stageOutOverflow).to.equal(false);
    expect(s.stageOut.equals(stageIn)).to.equal(true);
  });

  it('reports a child killed by a signal', async () => {
    const { exit } = await run('kill -KILL $$');
    expect(exit).to.deep.equal([null, 'SIGKILL']);
  });

  it('refuses a program that cannot start, with its errno, and keeps serving', async () => {
    const e = await server.spawn('/nonexistent/program', []).then(() => null, (x: NodeJS.ErrnoException) => x);
    expect(e?.code).to.equal('ENOENT');
    const { s } = await run('echo still');
    expect(s.stdout.toString()).to.equal('still\n');
  });

  it('a stage run without a launch, or discarded, reads an empty command line', async () => {
    const { exit } = await run('n=$(wc -c <&6); exit $n');
    expect(exit).to.deep.equal([0, null]);
    const p = await server.spawn(SH, ['-c', 'n=$(wc -c <&6); exit $n']);
    p.discard();
    expect(await exitOf(p)).to.deep.equal([0, null]);
  });

  it('writes a launched command line at once, before the run, which then sends only stdin and stage-in', async () => {
    // The child acts on its command line before any run is asked for: it leaves a mark
    // on stage-out (read once the run starts) and only then reads stdin and stage-in.
    const p = await server.spawn(SH, ['-c', 'tr -d "\\000" <&6 >&4; cat; cat <&3 >&2']);
    p.launch(Buffer.from('go\0now\0'));
    const s = await p.run(io({ stdin: Buffer.from('in'), stageIn: Buffer.from('stage') }));
    expect([s.stageOut.toString(), s.stdout.toString(), s.stderr.toString()]).to.deep.equal(['gonow', 'in', 'stage']);
    expect(await exitOf(p)).to.deep.equal([0, null]);
  });

  it('a discarded launched stage reads an empty stage-in', async () => {
    const p = await server.spawn(SH, ['-c', 'cat <&6 >/dev/null; n=$(wc -c <&3); exit $n']);
    p.launch(Buffer.from('argv\0'));
    p.discard();
    expect(await exitOf(p)).to.deep.equal([0, null]);
  });

  it('runs stages side by side without mixing their streams', async () => {
    const all = await Promise.all(Array.from({ length: 8 }, (_, i) => run(`head -c ${1000 * (i + 1)} /dev/zero | tr '\\0' ${i}`)));
    all.forEach(({ s }, i) => expect(s.stdout.toString()).to.equal(String(i).repeat(1000 * (i + 1))));
  });
});
