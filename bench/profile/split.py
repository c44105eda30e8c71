#!/usr/bin/env python3
# A stage's own CPU from a system-wide perf profile (README.md): reads `perf script
# --show-task-events` (with call chains) on stdin and counts the samples of ROOT_PID's
# process tree only, per stage. Usage: split.py ROOT_PID HZ STAGES
import re, sys, collections
root = int(sys.argv[1]); hz = float(sys.argv[2]); stages = int(sys.argv[3])
parent = {}; comm_of = {}
samples = collections.Counter(); sysc = collections.Counter(); kept = []
cur = None; chain = []
def flush():
    global cur, chain
    if cur is None: return
    pid, tid, comm = cur
    p = pid; inside = False; seen = 0
    while p and seen < 64:
        if p == root: inside = True; break
        p = parent.get(p); seen += 1
    if inside:
        who = 'node (runner)' if pid == root else comm
        samples[who] += 1
        sc = None
        for fr in chain:
            m = re.search(r'(?:__x64_sys_|__do_sys_|__se_sys_|ksys_)(\w+)', fr)
            if m: sc = m.group(1)
        if sc is None:
            sc = 'user' if not any('[kernel.kallsyms]' in f for f in chain[:1]) else ('fault/irq/other kernel: ' + (re.sub(r'^\s*\S+\s+', '', chain[0]).split('+')[0].split(' (')[0] if chain else '?'))
        sysc[(who, sc)] += 1
        kept.append((who, chain))
    cur = None; chain = []
for line in sys.stdin:
    m = re.search(r'PERF_RECORD_FORK\((\d+):(\d+)\):\((\d+):(\d+)\)', line)
    if m:
        child, ppid = int(m.group(1)), int(m.group(3))
        if child != ppid: parent.setdefault(child, ppid)
        continue
    if 'PERF_RECORD' in line: continue
    m = re.match(r'^(\S.*?)\s+(\d+)(?:/(\d+))?\s+\[\d+\]', line)
    if m:
        flush(); cur = (int(m.group(2)), int(m.group(3) or m.group(2)), m.group(1).strip()); continue
    if line.strip() == '': flush(); continue
    if cur is not None: chain.append(line.strip())
flush()
ms = lambda n: n / hz * 1000 / stages
print(f"per stage, ms of CPU (samples at {hz:.0f} Hz over {stages} stages)")
for who, n in samples.most_common(): print(f"  {who:28s} {ms(n):6.3f}")
print("by system call (callers' top syscall frame), per stage:")
for (who, sc), n in sysc.most_common(45): print(f"  {who:22s} {sc:50s} {ms(n):6.3f}")
# Finer: what inside the kernel (markers in the call chain), for the sandbox processes.
MARK = [('copy_net_ns','clone: network namespace'),('setup_net','clone: network namespace'),('copy_mnt_ns','clone: mount namespace (copy of the launcher\'s mounts)'),
 ('create_pid_namespace','clone: pid namespace'),('copy_ipcs','clone: ipc namespace'),('copy_cgroup_ns','clone: cgroup namespace'),('copy_utsname','clone: uts namespace'),
 ('proc_fill_super','mount: /proc superblock'),('proc_',None),('shmem_fill_super','mount: tmpfs superblock'),('devpts','mount: devpts'),('do_loopback','mount: bind (the /proc masks again)'),('attach_recursive_mnt','mount: attach'),
 ('cgroup_attach','cgroup join (cgroup.procs write)'),('__cgroup_procs_write','cgroup join (cgroup.procs write)'),('cgroup_mkdir','cgroup mkdir'),('cgroup_rmdir','cgroup rmdir'),
 ('seccomp','seccomp load / JIT'),('bpf_','seccomp load / JIT'),('do_jit','seccomp load / JIT'),
 ('free_nsproxy','exit: namespaces torn down'),('put_mnt_ns','exit: mount namespace torn down'),('zap_pid_ns','exit: pid namespace end'),('cleanup_net','exit: network namespace'),('exit_mmap','exit: address space'),
 ('dev_change_flags','loopback up'),('bprm_execve','execve'),('load_elf_binary','execve'),('copy_process','clone: process itself')]
det = collections.Counter()

for who, chain in kept:
    if who not in ('init', 'runbox-forkserv'): continue
    label = None
    for k, l in MARK:  # the first marker of the list found anywhere in the chain
        if l and any(k in fr for fr in chain): label = l; break
    if label is None:
        scs = [re.search(r'(?:__x64_sys_|__do_sys_|__se_sys_)(\w+)', fr) for fr in chain]
        scs = [m.group(1) for m in scs if m]
        label = 'other: ' + (scs[-1] if scs else ('user' if chain and 'kallsyms' not in chain[0] else 'kernel, no syscall'))
    det[(who, label)] += 1
print("inside the kernel, by what it was doing (outermost marker in the chain), per stage:")
for (who, l), n in det.most_common(40): print(f"  {who:18s} {l:60s} {ms(n):6.3f}")
