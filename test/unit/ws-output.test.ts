import { expect } from 'chai';
import { OUTPUT_CHUNK_UNITS, parseOutputMessage, splitOutput } from '../../src/queue/output-channel.js';
import { parseClientMessage } from '../../src/api/ws/messages.js';

describe('WebSocket output messages', () => {
  it('split output into NOTIFY-sized chunks, never inside a surrogate pair, losing nothing', () => {
    const text = 'a'.repeat(OUTPUT_CHUNK_UNITS - 1) + '😀' + '\u0001'.repeat(3000) + 'é'.repeat(1500);
    const parts = splitOutput(text);
    expect(parts.join('')).to.equal(text);
    for (const p of parts) {
      expect(p.length).to.be.at.most(OUTPUT_CHUNK_UNITS);
      const payload = JSON.stringify({ i: '00000000-0000-4000-8000-000000000000', n: 123456, s: 'stdout', d: p });
      // Postgres refuses NOTIFY payloads of 8000 bytes or more.
      expect(Buffer.byteLength(payload)).to.be.below(8000);
      expect(() => encodeURIComponent(p)).to.not.throw(); // a lone surrogate would throw
    }
    expect(splitOutput('')).to.deep.equal([]);
  });

  it('parse only well-formed channel messages', () => {
    expect(parseOutputMessage('{"i":"a","a":2,"n":0,"s":"stderr","d":"x"}')).to.deep.equal({ i: 'a', a: 2, n: 0, s: 'stderr', d: 'x' });
    expect(parseOutputMessage('{"i":"a","a":2,"n":3,"end":true}')).to.deep.equal({ i: 'a', a: 2, n: 3, end: true });
    // A runner of an earlier release says no attempt: its first.
    expect(parseOutputMessage('{"i":"a","n":0,"s":"stdout","d":"x"}')).to.deep.equal({ i: 'a', a: 1, n: 0, s: 'stdout', d: 'x' });
    expect(parseOutputMessage('{"i":"a","n":0,"s":"stdin","d":"x"}')).to.equal(null);
    expect(parseOutputMessage('nope')).to.equal(null);
  });

  it('client run messages: valid ones pass, others name the problem and keep the id', () => {
    const ok = parseClientMessage('{"type":"run","id":"1","code":"print(1)","compiler":"python-3.9.7"}');
    expect(ok.ok).to.equal(true);
    const bad = parseClientMessage('{"type":"run","id":"7","code":"x","compiler":"nope"}');
    expect(bad).to.include({ ok: false, id: '7' });
    expect(parseClientMessage('[1')).to.deep.equal({ ok: false, id: null, message: 'messages must be JSON' });
    expect(parseClientMessage('{"type":"stop","id":"2"}')).to.include({ ok: false, id: '2' });
    expect(parseClientMessage('{"type":"run","id":"3","code":"a\\u0000b","compiler":"python-3.9.7"}').ok).to.equal(false);
  });

  it('client stdin messages: data, eof or both; wrong types and unknown fields are named', () => {
    expect(parseClientMessage('{"type":"run","id":"i","code":"input()","compiler":"python-3.9.7","interactive":true}').ok).to.equal(true);
    expect(parseClientMessage('{"type":"stdin","id":"i","data":"5\\n"}')).to.deep.equal({ ok: true, message: { type: 'stdin', id: 'i', data: '5\n' } });
    expect(parseClientMessage('{"type":"stdin","id":"i","eof":true}').ok).to.equal(true);
    expect(parseClientMessage('{"type":"stdin","id":"i","data":"x","eof":true}').ok).to.equal(true);
    const neither = parseClientMessage('{"type":"stdin","id":"i"}');
    expect(neither).to.deep.equal({ ok: false, id: 'i', message: 'invalid stdin message: give data, eof or both' });
    const number = parseClientMessage('{"type":"stdin","id":"i","data":5}');
    expect(number).to.include({ ok: false, id: 'i' });
    expect((number as { message: string }).message).to.match(/^invalid stdin message: \/data: /);
    const eofFalse = parseClientMessage('{"type":"stdin","id":"i","eof":false}');
    expect((eofFalse as { message: string }).message).to.match(/^invalid stdin message: \/eof: /);
    const extra = parseClientMessage('{"type":"stdin","id":"i","data":"x","stream":"stdin"}');
    expect((extra as { message: string }).message).to.equal('invalid stdin message: unknown field stream: the fields are type, id, data, eof');
    expect(parseClientMessage('{"type":"stdin","data":"x"}')).to.include({ ok: false, id: null });
    expect(parseClientMessage('{"type":"stdin","id":"i","data":"a\\u0000b"}').ok).to.equal(false);
    const interactiveText = parseClientMessage('{"type":"run","id":"r","code":"x","compiler":"python-3.9.7","interactive":"yes"}');
    expect((interactiveText as { message: string }).message).to.match(/^invalid run message: \/interactive: /);
    expect((parseClientMessage('{"type":"stop","id":"2"}') as { message: string }).message).to.equal('invalid message: /type: must be "run", "stdin" or "problem"');
  });
});
