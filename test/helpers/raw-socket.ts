import { randomBytes } from 'node:crypto';
import { connect, type Socket } from 'node:net';

// Raw TCP for what no well-behaved client sends: malformed HTTP and malformed
// WebSocket frames, written byte for byte.

/** Sends `data` and collects everything the server writes until it closes the connection. */
export function rawExchange(port: number, data: string | Buffer, options: { keepWriting?: boolean } = {}): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    const chunks: Buffer[] = [];
    socket.on('data', (c: Buffer) => chunks.push(c));
    socket.on('error', (err: NodeJS.ErrnoException) => (err.code === 'ECONNRESET' ? resolve(Buffer.concat(chunks)) : reject(err)));
    socket.on('close', () => resolve(Buffer.concat(chunks)));
    socket.write(data);
    if (!options.keepWriting) socket.end();
  });
}

export interface RawHttpAnswer {
  status: number;
  headers: Record<string, string>;
  body: string;
}

export function parseHttpAnswer(raw: Buffer): RawHttpAnswer {
  const text = raw.toString('utf8');
  const split = text.indexOf('\r\n\r\n');
  const head = split === -1 ? text : text.slice(0, split);
  const [statusLine, ...lines] = head.split('\r\n');
  const headers: Record<string, string> = {};
  for (const line of lines) {
    const at = line.indexOf(':');
    if (at > 0) headers[line.slice(0, at).trim().toLowerCase()] = line.slice(at + 1).trim();
  }
  return { status: Number(/^HTTP\/1\.1 (\d{3})/.exec(statusLine ?? '')?.[1] ?? 0), headers, body: split === -1 ? '' : text.slice(split + 4) };
}

/** A WebSocket handshake done by hand; resolves with the socket once the server answered 101. */
export function rawWebSocket(port: number, path: string): Promise<{ socket: Socket; received: Buffer[]; closed: Promise<Buffer> }> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    const received: Buffer[] = [];
    let upgraded = false;
    let head = Buffer.alloc(0);
    const closed = new Promise<Buffer>((r) => socket.on('close', () => r(Buffer.concat(received))));
    socket.on('error', () => {});
    socket.on('data', (c: Buffer) => {
      if (upgraded) return void received.push(c);
      head = Buffer.concat([head, c]);
      const end = head.indexOf('\r\n\r\n');
      if (end === -1) return;
      const status = head.subarray(0, end).toString('latin1');
      if (!status.startsWith('HTTP/1.1 101')) return reject(new Error(`no upgrade: ${status}`));
      upgraded = true;
      if (head.length > end + 4) received.push(head.subarray(end + 4));
      resolve({ socket, received, closed });
    });
    socket.write(
      `GET ${path} HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n` +
        `Sec-WebSocket-Key: ${randomBytes(16).toString('base64')}\r\nSec-WebSocket-Version: 13\r\n\r\n`,
    );
  });
}

/** A client frame; `masked: false` breaks the rule that client frames are masked. */
export function wsFrame(opts: { opcode?: number; payload?: Buffer; rsv1?: boolean; masked?: boolean; declaredLength?: number }): Buffer {
  const payload = opts.payload ?? Buffer.alloc(0);
  const length = opts.declaredLength ?? payload.length;
  const masked = opts.masked ?? true;
  const first = 0x80 | (opts.rsv1 ? 0x40 : 0) | (opts.opcode ?? 0x1);
  let header: Buffer;
  if (length < 126) header = Buffer.from([first, (masked ? 0x80 : 0) | length]);
  else if (length < 65536) {
    header = Buffer.alloc(4);
    header[0] = first;
    header[1] = (masked ? 0x80 : 0) | 126;
    header.writeUInt16BE(length, 2);
  } else {
    header = Buffer.alloc(10);
    header[0] = first;
    header[1] = (masked ? 0x80 : 0) | 127;
    header.writeBigUInt64BE(BigInt(length), 2);
  }
  if (!masked) return Buffer.concat([header, payload]);
  const mask = randomBytes(4);
  const body = Buffer.from(payload.map((b, i) => b ^ mask[i % 4]!));
  return Buffer.concat([header, mask, body]);
}

/** The status code of the first close frame (opcode 8) the server sent, or null. */
export function closeCode(received: Buffer): number | null {
  let at = 0;
  while (at + 2 <= received.length) {
    const opcode = received[at]! & 0x0f;
    let len = received[at + 1]! & 0x7f;
    let start = at + 2;
    if (len === 126) {
      len = received.readUInt16BE(at + 2);
      start += 2;
    } else if (len === 127) {
      len = Number(received.readBigUInt64BE(at + 2));
      start += 8;
    }
    if (opcode === 0x8) return len >= 2 ? received.readUInt16BE(start) : null;
    at = start + len;
  }
  return null;
}
