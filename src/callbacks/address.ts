import { BlockList, isIPv4, isIPv6 } from 'node:net';

// Which addresses a callback may connect to. Only public unicast addresses pass;
// everything a receiver could use to reach the service's own network is refused:
// loopback, private, link-local (cloud metadata at 169.254.169.254), CGNAT,
// multicast, unspecified, reserved and documentation ranges, IPv6 ULA and link-local,
// and IPv6 forms that embed an IPv4 address (mapped, NAT64, 6to4, Teredo).

const V4_REFUSED: [string, number, string][] = [
  ['0.0.0.0', 8, 'unspecified ("this network")'],
  ['10.0.0.0', 8, 'private'],
  ['100.64.0.0', 10, 'carrier-grade NAT'],
  ['127.0.0.0', 8, 'loopback'],
  ['169.254.0.0', 16, 'link-local (cloud metadata)'],
  ['172.16.0.0', 12, 'private'],
  ['192.0.0.0', 24, 'IETF protocol assignments'],
  ['192.0.2.0', 24, 'documentation'],
  ['192.88.99.0', 24, '6to4 relay'],
  ['192.168.0.0', 16, 'private'],
  ['198.18.0.0', 15, 'benchmarking'],
  ['198.51.100.0', 24, 'documentation'],
  ['203.0.113.0', 24, 'documentation'],
  ['224.0.0.0', 4, 'multicast'],
  ['240.0.0.0', 4, 'reserved or broadcast'],
];

const V6_REFUSED: [string, number, string][] = [
  ['::', 128, 'unspecified'],
  ['::1', 128, 'loopback'],
  ['::ffff:0:0', 96, 'IPv4-mapped'],
  ['64:ff9b::', 96, 'NAT64 (embeds IPv4)'],
  ['64:ff9b:1::', 48, 'local NAT64'],
  ['100::', 64, 'discard-only'],
  ['2001::', 32, 'Teredo (embeds IPv4)'],
  ['2001:db8::', 32, 'documentation'],
  ['2002::', 16, '6to4 (embeds IPv4)'],
  ['fc00::', 7, 'unique local (ULA)'],
  ['fe80::', 10, 'link-local'],
  ['fec0::', 10, 'site-local'],
  ['ff00::', 8, 'multicast'],
];

function listOf(rules: [string, number, string][], family: 'ipv4' | 'ipv6'): { list: BlockList; why: string }[] {
  return rules.map(([net, prefix, why]) => {
    const list = new BlockList();
    list.addSubnet(net, prefix, family);
    return { list, why };
  });
}
const V4 = listOf(V4_REFUSED, 'ipv4');
const V6 = listOf(V6_REFUSED, 'ipv6');
const GLOBAL_UNICAST_V6 = new BlockList();
GLOBAL_UNICAST_V6.addSubnet('2000::', 3, 'ipv6');

/** The eight 16-bit groups of an IPv6 address (a trailing dotted IPv4 part included). */
export function ipv6Groups(address: string): number[] {
  let a = address.toLowerCase();
  const dotted = /(\d+\.\d+\.\d+\.\d+)$/.exec(a);
  if (dotted) {
    const [b0, b1, b2, b3] = dotted[1]!.split('.').map(Number) as [number, number, number, number];
    a = a.slice(0, dotted.index) + `${((b0 << 8) | b1).toString(16)}:${((b2 << 8) | b3).toString(16)}`;
  }
  const [head, tail] = a.split('::') as [string, string | undefined];
  const part = (s: string | undefined) => (s ? s.split(':').map((g) => parseInt(g, 16)) : []);
  const h = part(head);
  const t = part(tail);
  return tail === undefined ? h : [...h, ...new Array<number>(8 - h.length - t.length).fill(0), ...t];
}

/** The IPv4 address inside an IPv4-mapped IPv6 address (::ffff:a.b.c.d in any spelling), else null. */
export function mappedIPv4(address: string): string | null {
  if (!isIPv6(address)) return null;
  const g = ipv6Groups(address);
  if (g.slice(0, 5).some((x) => x !== 0) || g[5] !== 0xffff) return null;
  return `${g[6]! >> 8}.${g[6]! & 255}.${g[7]! >> 8}.${g[7]! & 255}`;
}

/** Null when `address` (a literal IP) is a public unicast address; otherwise why it is refused. */
export function refusedAddress(address: string): string | null {
  const a = address.replace(/^\[|\]$/g, '').replace(/%.*$/, '');
  if (isIPv4(a)) {
    const hit = V4.find((r) => r.list.check(a, 'ipv4'));
    return hit ? `${a} is ${hit.why}` : null;
  }
  if (isIPv6(a)) {
    const inner = mappedIPv4(a);
    if (inner !== null) {
      const why = refusedAddress(inner);
      // Even a public IPv4 behind the mapped form is refused: it has no business in DNS.
      return `${a} is IPv4-mapped${why ? ` (${why})` : ''}`;
    }
    const hit = V6.find((r) => r.list.check(a, 'ipv6'));
    if (hit) return `${a} is ${hit.why}`;
    if (!GLOBAL_UNICAST_V6.check(a, 'ipv6')) return `${a} is not global unicast`;
    return null;
  }
  return `${address} is not an IP address`;
}
