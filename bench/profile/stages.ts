import { join } from 'node:path';
import { compilerEntry } from '../../src/compilers/catalogue.js';
import { loadConfig } from '../../src/config.js';
import { planProgram } from '../../src/program/plan.js';
import { createSandbox } from '../../src/sandbox/index.js';

// The stages a profile of a stage's own CPU records (bench/profile/README.md): the C
// hello world compiled once, then N pooled stages of it one after another on one slot
// (RUNBOX_PROFILE_SLOT, default 90). Prints its pid first, for split.py.
// Usage: node dist/bench/profile/stages.js N

const config = loadConfig();
const slot = Number(process.env.RUNBOX_PROFILE_SLOT ?? 90);
const n = Number(process.argv[2] ?? 500);
console.log(process.pid);
const sb = await createSandbox(config);
const gcc = compilerEntry('gcc-4.9');
if (!gcc?.compile) throw new Error('no gcc-4.9 recipe');
const rootfs = join(config.RUNBOX_IMAGES_DIR, gcc.image, 'rootfs');
const plan = planProgram(gcc, { code: gcc.hello.code });
const built = await sb.run({ rootfs, argv: plan.compile!.argv, files: plan.files, collect: plan.compile!.collect, slot });
const binary = built.collected[0];
if (!binary) throw new Error(`compiling the C hello world failed: ${built.stderr.toString()}`);
const spec = { rootfs, argv: [`./${binary.name}`], files: [binary], slot };
for (let i = 0; i < 20; i++) await sb.run(spec);
const t0 = performance.now();
const c0 = process.cpuUsage();
for (let i = 0; i < n; i++) {
  const r = await sb.run(spec);
  if (r.status !== 'exited') throw new Error(`stage ${i}: ${r.status} ${r.diagnostic ?? ''}`);
}
const c = process.cpuUsage(c0);
console.error(`${n} stages: wall ${((performance.now() - t0) / n).toFixed(2)} ms each, the runner's process ${((c.user + c.system) / 1000 / n).toFixed(2)} ms of CPU each`);
await sb.close?.();
