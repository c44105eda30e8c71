import { expect } from 'chai';
import { KERNEL_LIMITS } from '../../src/limits.js';
import { cellOutcome, cellWorkspace, kernelInterpreter } from '../../src/sessions/kernel.js';
import type { StageFile } from '../../src/sandbox/spec.js';

// The runner's side of a kernel cell: what of the sandbox's /box is kept, and the result
// file read as untrusted input (the cell's own code can write it).

const file = (name: string, content: string | Buffer): StageFile => ({ name, mode: 0o644, content: Buffer.isBuffer(content) ? content : Buffer.from(content) });
const ran = { status: 'success' as const, exit_code: 0, signal: null };
const PNG = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 1]).toString('base64');
const good = { value: '42', images: [{ name: 'figure-1.png', content_base64: PNG }], error: null, not_kept: [] };

describe('kernel cells (runner side)', () => {
  it('takes the driver and the cell in, and keeps of .kernel/ only the state', () => {
    const ws = cellWorkspace([file('data.csv', 'a'), file('.kernel/state.pickle', 's'), file('.kernel/driver.py', 'planted')], 'x = 1');
    expect(ws.map((f) => f.name)).to.deep.equal(['data.csv', '.kernel/state.pickle', '.kernel/driver.py', '.kernel/cell.py']);
    expect(ws.find((f) => f.name === '.kernel/driver.py')!.content.toString()).to.not.equal('planted');
    const left = [file('data.csv', 'a'), file('.kernel/state.pickle', 's2'), file('.kernel/state.pickle.tmp', 't'), file('.kernel/result.json', JSON.stringify(good))];
    const { keep, kernel } = cellOutcome(left, ran);
    expect(keep!.map((f) => f.name)).to.deep.equal(['data.csv', '.kernel/state.pickle']);
    expect(kernel).to.deep.equal(good);
  });

  it('reads a result that fails its shape or bounds as none: the interpreter did not finish', () => {
    const bad = [
      'not json',
      JSON.stringify({ ...good, value: 7 }),
      JSON.stringify({ ...good, images: [{ name: '../../etc/x.png', content_base64: PNG }] }),
      JSON.stringify({ ...good, images: [{ name: 'figure-1.png', content_base64: Buffer.from('GIF89a').toString('base64') }] }),
      JSON.stringify({ ...good, images: Array.from({ length: KERNEL_LIMITS.imagesMax + 1 }, (_, i) => ({ name: `figure-${i}.png`, content_base64: PNG })) }),
      JSON.stringify({ ...good, value: 'x'.repeat(KERNEL_LIMITS.valueChars + 10) }),
      Buffer.alloc(KERNEL_LIMITS.resultBytes + 1, 0x20),
    ];
    for (const content of bad) {
      const { kernel } = cellOutcome([file('.kernel/result.json', content)], { status: 'runtime_error', exit_code: 9, signal: null });
      expect(kernel.error, String(content).slice(0, 80)).to.deep.include({ name: 'KernelDied' });
      expect(kernel.error!.message).to.contain('exit code 9');
      expect(kernel.value).to.equal(null);
    }
    // Fields it does not know are not passed on.
    expect(cellOutcome([file('.kernel/result.json', JSON.stringify({ ...good, extra: 1 }))], ran).kernel).to.deep.equal(good);
    expect(cellOutcome([], { status: 'timeout', exit_code: 137, signal: 9 }).kernel.error!.name).to.equal('Timeout');
    expect(cellOutcome(undefined, ran).keep).to.equal(undefined);
  });

  it('keeps the state from before the cell when none came back (past the workspace bounds)', () => {
    const before = [file('.kernel/state.pickle', 'old'), file('big.bin', 'b')];
    const { keep } = cellOutcome([file('big.bin', 'b')], ran, before);
    expect(keep!.map((f) => [f.name, f.content.toString()])).to.deep.equal([['.kernel/state.pickle', 'old'], ['big.bin', 'b']]);
    // One that came back is the cell's.
    expect(cellOutcome([file('.kernel/state.pickle', 'new')], ran, before).keep![0]!.content.toString()).to.equal('new');
  });

  it('offers a kernel for Python 3 interpreters only', () => {
    expect(kernelInterpreter({ language: 'python', run: ['/usr/bin/python3.9', '{file}'] })).to.equal('/usr/bin/python3.9');
    expect(kernelInterpreter({ language: 'python', run: ['/usr/bin/python2.7', '{file}'] })).to.equal(undefined);
    expect(kernelInterpreter({ language: 'c', run: ['./prog'] })).to.equal(undefined);
  });
});
