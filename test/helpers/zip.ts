import { crc32, deflateRawSync } from 'node:zlib';

// A small zip writer for tests: problem packages as a problem setter's tools make them,
// and hostile ones no well-behaved library would write (names with .., symbolic links,
// entries whose directory lies about their size).

export interface ZipEntryInput {
  name: string;
  content?: Buffer | string;
  /** Stored without compression (default: deflated). */
  store?: boolean;
  /** Unix mode in the external attributes (0o120777 for a symbolic link). */
  mode?: number;
  /** The uncompressed size the headers declare, if not the real one (a lying zip). */
  declaredSize?: number;
}

export function makeZip(entries: ZipEntryInput[]): Buffer {
  const locals: Buffer[] = [];
  const centrals: Buffer[] = [];
  let offset = 0;
  for (const e of entries) {
    const content = typeof e.content === 'string' ? Buffer.from(e.content) : (e.content ?? Buffer.alloc(0));
    const data = e.store ? content : deflateRawSync(content);
    const method = e.store ? 0 : 8;
    const name = Buffer.from(e.name);
    const size = e.declaredSize ?? content.length;
    const crc = crc32(content);
    const local = Buffer.alloc(30);
    local.writeUInt32LE(0x04034b50, 0);
    local.writeUInt16LE(20, 4);
    local.writeUInt16LE(0x0800, 6);
    local.writeUInt16LE(method, 8);
    local.writeUInt32LE(crc, 14);
    local.writeUInt32LE(data.length, 18);
    local.writeUInt32LE(size, 22);
    local.writeUInt16LE(name.length, 26);
    locals.push(local, name, data);
    const central = Buffer.alloc(46);
    central.writeUInt32LE(0x02014b50, 0);
    central.writeUInt16LE((3 << 8) | 20, 4);
    central.writeUInt16LE(20, 6);
    central.writeUInt16LE(0x0800, 8);
    central.writeUInt16LE(method, 10);
    central.writeUInt32LE(crc, 16);
    central.writeUInt32LE(data.length, 20);
    central.writeUInt32LE(size, 24);
    central.writeUInt16LE(name.length, 28);
    central.writeUInt32LE(((e.mode ?? (e.name.endsWith('/') ? 0o40755 : 0o100644)) << 16) >>> 0, 38);
    central.writeUInt32LE(offset, 42);
    centrals.push(central, name);
    offset += local.length + name.length + data.length;
  }
  const cd = Buffer.concat(centrals);
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  end.writeUInt16LE(entries.length, 8);
  end.writeUInt16LE(entries.length, 10);
  end.writeUInt32LE(cd.length, 12);
  end.writeUInt32LE(offset, 16);
  return Buffer.concat([...locals, cd, end]);
}
