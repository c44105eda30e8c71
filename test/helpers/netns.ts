import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';

// "Hosts" on one machine: a network namespace each, joined by veth pairs to a bridge in
// the machine's own namespace, which holds the bridge's address (where PostgreSQL and a
// test's callback receiver listen). Processes run in a host with `nsenter --net`, which
// changes their network and nothing else (`ip netns exec` would remount /sys, taking the
// cgroup mounts a runner needs). Links are cut with `ip link set … down` or an nftables
// drop and healed again; latency is added with tc's netem where the kernel has it.

export interface HostCapabilities {
  /** Why no namespaces can be made here, or undefined. */
  netns?: string;
  /** Why nftables cannot be used, or undefined. */
  nft?: string;
  /** Why netem cannot add latency, or undefined. */
  netem?: string;
}

function run(cmd: string, args: string[]): string {
  return execFileSync(cmd, args, { stdio: ['ignore', 'pipe', 'pipe'], timeout: 10_000 }).toString();
}

function tryRun(cmd: string, args: string[]): string | undefined {
  try {
    run(cmd, args);
    return undefined;
  } catch (err) {
    const e = err as { stderr?: Buffer; message: string };
    return (e.stderr?.toString().trim() || e.message).split('\n')[0];
  }
}

const onPath = (cmd: string) => ['/usr/sbin', '/usr/bin', '/sbin', '/bin'].some((d) => existsSync(`${d}/${cmd}`));

/** Probes, in a throwaway namespace, each thing the partition tests need. */
export function probeHost(): HostCapabilities {
  if (process.getuid?.() !== 0) return { netns: 'network namespaces need root', nft: 'needs root', netem: 'needs root' };
  for (const cmd of ['ip', 'nsenter']) if (!onPath(cmd)) return { netns: `${cmd} is not installed`, nft: 'no namespaces', netem: 'no namespaces' };
  const ns = `rbxprobe${process.pid}`;
  const made = tryRun('ip', ['netns', 'add', ns]);
  if (made) return { netns: `ip netns add failed: ${made}`, nft: 'no namespaces', netem: 'no namespaces' };
  try {
    const veth = tryRun('ip', ['-n', ns, 'link', 'add', 'p0', 'type', 'veth', 'peer', 'name', 'p1']);
    const bridge = tryRun('ip', ['-n', ns, 'link', 'add', 'pb', 'type', 'bridge']);
    if (veth || bridge) return { netns: `veth or bridge not available: ${veth ?? bridge}`, nft: 'no namespaces', netem: 'no namespaces' };
    run('ip', ['-n', ns, 'link', 'set', 'p0', 'up']);
    const caps: HostCapabilities = {};
    if (!onPath('nft')) caps.nft = 'nft is not installed (apt-get install nftables)';
    else {
      const nft = tryRun('ip', ['netns', 'exec', ns, 'nft', 'add', 'table', 'inet', 'probe']);
      if (nft) caps.nft = `nftables refused a table: ${nft}`;
    }
    if (!onPath('tc')) caps.netem = 'tc is not installed (iproute2)';
    else {
      const netem = tryRun('tc', ['-n', ns, 'qdisc', 'add', 'dev', 'p0', 'root', 'netem', 'delay', '50ms']);
      if (netem) caps.netem = `this kernel has no sch_netem (tc: ${netem})`;
    }
    return caps;
  } finally {
    tryRun('ip', ['netns', 'del', ns]);
  }
}

export interface Host {
  name: string;
  /** The namespace's name (/run/netns/NAME). */
  ns: string;
  address: string;
  /** The command prefix that runs a program in this host. */
  wrap: string[];
}

export interface Network {
  /** The bridge's address in the machine's own namespace. */
  gateway: string;
  /** The subnet, as pg_hba.conf writes it. */
  subnet: string;
  hosts: Map<string, Host>;
  host(name: string): Host;
  /** Takes the host's link down (every connection it has stalls) or brings it back. */
  setLink(name: string, up: boolean): void;
  /** Drops (or stops dropping) the host's packets to and from one address and port, with nftables. */
  block(name: string, address: string, port: number): void;
  unblock(name: string): void;
  /** Adds `ms` of delay to everything the host sends (netem), or removes it (0). */
  delay(name: string, ms: number): void;
  /** Removes every namespace, the bridge and its veths (safe to call twice). */
  remove(): void;
}

/** A bridge and one namespace per name, each with an address on the bridge's /24. */
export function createNetwork(names: string[]): Network {
  const id = (process.pid % 10_000).toString(36) + Math.floor(Math.random() * 36).toString(36);
  const third = 20 + (process.pid % 200);
  const prefix = `10.231.${third}`;
  const bridge = `rbb${id}`;
  const hosts = new Map<string, Host>();
  const made: string[] = [];
  let removed = false;
  const remove = () => {
    if (removed) return;
    removed = true;
    for (const ns of made) tryRun('ip', ['netns', 'del', ns]);
    tryRun('ip', ['link', 'del', bridge]);
  };
  // A test process that dies in the middle still leaves nothing behind.
  process.once('exit', remove);
  try {
    run('ip', ['link', 'add', bridge, 'type', 'bridge']);
    run('ip', ['addr', 'add', `${prefix}.1/24`, 'dev', bridge]);
    run('ip', ['link', 'set', bridge, 'up']);
    names.forEach((name, i) => {
      const ns = `rbx${id}-${name}`;
      const outside = `rbv${id}${i}`;
      run('ip', ['netns', 'add', ns]);
      made.push(ns);
      run('ip', ['link', 'add', outside, 'type', 'veth', 'peer', 'name', 'eth0', 'netns', ns]);
      run('ip', ['link', 'set', outside, 'master', bridge, 'up']);
      const address = `${prefix}.${10 + i}`;
      run('ip', ['-n', ns, 'addr', 'add', `${address}/24`, 'dev', 'eth0']);
      run('ip', ['-n', ns, 'link', 'set', 'eth0', 'up']);
      run('ip', ['-n', ns, 'link', 'set', 'lo', 'up']);
      hosts.set(name, { name, ns, address, wrap: ['nsenter', `--net=/run/netns/${ns}`, '--'] });
    });
  } catch (err) {
    remove();
    throw err;
  }
  const host = (name: string) => {
    const h = hosts.get(name);
    if (!h) throw new Error(`no host ${name}`);
    return h;
  };
  return {
    gateway: `${prefix}.1`,
    subnet: `${prefix}.0/24`,
    hosts,
    host,
    setLink: (name, up) => run('ip', ['-n', host(name).ns, 'link', 'set', 'eth0', up ? 'up' : 'down']),
    block: (name, address, port) => {
      const ns = host(name).ns;
      const nft = (...args: string[]) => run('ip', ['netns', 'exec', ns, 'nft', ...args]);
      nft('add', 'table', 'inet', 'runbox_cut');
      nft('add', 'chain', 'inet', 'runbox_cut', 'out', '{ type filter hook output priority 0 ; }');
      nft('add', 'chain', 'inet', 'runbox_cut', 'in', '{ type filter hook input priority 0 ; }');
      nft('add', 'rule', 'inet', 'runbox_cut', 'out', 'ip', 'daddr', address, 'tcp', 'dport', String(port), 'drop');
      nft('add', 'rule', 'inet', 'runbox_cut', 'in', 'ip', 'saddr', address, 'tcp', 'sport', String(port), 'drop');
    },
    unblock: (name) => run('ip', ['netns', 'exec', host(name).ns, 'nft', 'delete', 'table', 'inet', 'runbox_cut']),
    delay: (name, ms) =>
      ms > 0
        ? run('tc', ['-n', host(name).ns, 'qdisc', 'replace', 'dev', 'eth0', 'root', 'netem', 'delay', `${ms}ms`])
        : run('tc', ['-n', host(name).ns, 'qdisc', 'del', 'dev', 'eth0', 'root']),
    remove,
  };
}
