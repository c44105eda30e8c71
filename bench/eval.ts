import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { sql } from 'kysely';
import { loadAverage, QUICK, row, runIfMain, writeResult, type BenchOutcome } from './common.js';
import { cpuDelta, postgresCpu, postgresCpuDelta, procCpu, runnerCpu } from './cpu.js';
import { buildHarness, floor } from './floor.js';
import { benchStack, imageRootfs, PYTHON } from './stack.js';

// An evaluation through a batch: ITEMS HumanEval-style Python items (a function and its
// asserts, written here from ten families of small problems with their expected values)
// sent as one POST /api/v2/batches, the runner started, the results streamed back. Figures:
// runs finished per second (first to last finish) and CPU per run of the runner's process
// and its sandbox children, the database's backends and the API process. Floor: the same
// programs exec'd directly in the image (bench/native/floor.c: fork, chroot, exec), as
// many at a time as the runner has slots, over FLOOR_ITEMS of the items.

const ITEMS = Number(process.env.RUNBOX_BENCH_EVAL_ITEMS ?? (QUICK ? 100 : 1000));
const FLOOR_ITEMS = 10;

/** The item's program: the function, then asserts of its expected values. */
export function item(i: number): string {
  const k = Math.floor(i / 10) + 2;
  const fib = (n: number): number => (n < 2 ? n : fib(n - 1) + fib(n - 2));
  const gcd = (a: number, b: number): number => (b === 0 ? a : gcd(b, a % b));
  const isPrime = (n: number) => n > 1 && Array.from({ length: Math.floor(Math.sqrt(n)) - 1 }, (_, d) => d + 2).every((d) => n % d !== 0);
  const word = 'abcdefghij'.slice(0, (k % 9) + 1) + 'aeiou'.slice(0, k % 5);
  switch (i % 10) {
    case 0:
      return `def add(a: int, b: int) -> int:\n    return a + b\n\nassert add(${k}, ${i}) == ${k + i}\nassert add(-${k}, ${k}) == 0\n`;
    case 1:
      return `def fib(n: int) -> int:\n    a, b = 0, 1\n    for _ in range(n):\n        a, b = b, a + b\n    return a\n\nassert fib(${k % 25}) == ${fib(k % 25)}\nassert fib(1) == 1\n`;
    case 2:
      return `def is_prime(n: int) -> bool:\n    if n < 2:\n        return False\n    d = 2\n    while d * d <= n:\n        if n % d == 0:\n            return False\n        d += 1\n    return True\n\nassert is_prime(${k * 7 + 1}) == ${isPrime(k * 7 + 1) ? 'True' : 'False'}\nassert not is_prime(1)\n`;
    case 3:
      return `def reverse_words(s: str) -> str:\n    return " ".join(reversed(s.split()))\n\nassert reverse_words("a b ${k}") == "${k} b a"\n`;
    case 4:
      return `def is_palindrome(s: str) -> bool:\n    t = [c.lower() for c in s if c.isalnum()]\n    return t == t[::-1]\n\nassert is_palindrome("${word}${[...word].reverse().join('')}")\nassert not is_palindrome("ab${k}")\n`;
    case 5:
      return `def gcd(a: int, b: int) -> int:\n    while b:\n        a, b = b, a % b\n    return a\n\nassert gcd(${k * 6}, ${k * 4}) == ${gcd(k * 6, k * 4)}\n`;
    case 6:
      return `def sum_squares(xs: list) -> int:\n    return sum(x * x for x in xs)\n\nassert sum_squares(list(range(${k}))) == ${Array.from({ length: k }, (_, x) => x * x).reduce((a, b) => a + b, 0)}\n`;
    case 7:
      return `def count_vowels(s: str) -> int:\n    return sum(1 for c in s.lower() if c in "aeiou")\n\nassert count_vowels("${word}") == ${[...word].filter((c) => 'aeiou'.includes(c)).length}\n`;
    case 8:
      return `def max_subarray(xs: list) -> int:\n    best = cur = xs[0]\n    for x in xs[1:]:\n        cur = max(x, cur + x)\n        best = max(best, cur)\n    return best\n\nassert max_subarray([-2, 1, -3, 4, -1, 2, 1, -5, ${k}]) == ${Math.max(6, 6 - 5 + k, k)}\n`;
    default:
      return `def factorial(n: int) -> int:\n    r = 1\n    for i in range(2, n + 1):\n        r *= i\n    return r\n\nassert factorial(${k % 20}) == ${[...Array(k % 20).keys()].reduce((r, x) => r * BigInt(x + 1), 1n).toString()}\n`;
  }
}

export async function benchEval(): Promise<BenchOutcome> {
  const s = await benchStack('bench_eval', { accounts: 1 });
  const loadBefore = loadAverage();
  const slots = s.config.RUNBOX_RUNNER_SLOTS;
  const key = s.keys[0]!;
  const codes = Array.from({ length: ITEMS }, (_, i) => item(i));
  const dir = mkdtempSync('/dev/shm/runbox-bench-eval-');
  try {
    const rootfs = imageRootfs(s.config, 'python3.9');
    // The floor first, while nothing else of the stack runs.
    codes.slice(0, FLOOR_ITEMS).forEach((code, i) => writeFileSync(join(dir, `item${i}.py`), code));
    const harness = buildHarness();
    const perItem = Math.ceil(ITEMS / FLOOR_ITEMS);
    let floorWall = 0;
    let floorCpu = 0;
    for (let i = 0; i < FLOOR_ITEMS; i++) {
      const f = await floor(harness, rootfs, perItem, slots, ['/usr/bin/python3.9', `/tmp/item${i}.py`], [dir, '/tmp']);
      floorWall += f.wallMs;
      floorCpu += f.cpuMs;
    }
    const floorRuns = perItem * FLOOR_ITEMS;

    await s.startRunner();
    const since = (await sql<{ t: Date }>`SELECT clock_timestamp() AS t`.execute(s.db.db)).rows[0]!.t;
    const api0 = s.apiPid ? procCpu(s.apiPid).selfMs : 0;
    const pg0 = await postgresCpu(s.db.db);
    const r0 = runnerCpu();
    const body = codes.map((code) => JSON.stringify({ compiler: PYTHON, code })).join('\n') + '\n';
    const res = await fetch(`${s.url}/api/v2/batches`, { method: 'POST', headers: { Authorization: key, 'Content-Type': 'application/jsonl' }, body });
    if (res.status !== 201) throw new Error(`the batch was refused: ${res.status} ${await res.text()}`);
    const { id } = (await res.json()) as { id: string };
    const lines = (await (await fetch(`${s.url}/api/v2/batches/${id}/results`, { headers: { Authorization: key } })).text()).split('\n').filter(Boolean);
    const ran = cpuDelta(r0, runnerCpu());
    const postgresMs = postgresCpuDelta(pg0, await postgresCpu(s.db.db));
    const apiMs = s.apiPid ? procCpu(s.apiPid).selfMs - api0 : 0;
    const results = lines.map((l) => JSON.parse(l) as { index: number; result?: { status: string } });
    const indexes = new Set(results.map((r) => r.index));
    if (results.length !== ITEMS || indexes.size !== ITEMS) throw new Error(`${results.length} results for ${indexes.size} distinct items of ${ITEMS}`);
    const failed = results.filter((r) => r.result?.status !== 'success').length;
    if (failed > 0) throw new Error(`${failed} items did not pass`);
    const { rows } = await sql<{ seconds: number }>`SELECT extract(epoch FROM max(finished_at) - min(finished_at))::float8 AS seconds FROM submissions WHERE created_at >= ${since}`.execute(s.db.db);
    const runsPerSecond = (ITEMS - 1) / rows[0]!.seconds;
    const floorPerSecond = floorRuns / (floorWall / 1000);
    const per = { runnerNodeMs: ran.selfMs / ITEMS, sandboxChildrenMs: ran.childrenMs / ITEMS, postgresMs: postgresMs / ITEMS, apiMs: apiMs / ITEMS, floorMs: floorCpu / floorRuns };
    const cpuPerRun = per.runnerNodeMs + per.sandboxChildrenMs + per.postgresMs + per.apiMs;
    const result = {
      date: new Date().toISOString(),
      items: ITEMS,
      slots,
      launcher: s.launcher(),
      runsPerSecond: +runsPerSecond.toFixed(2),
      floorRunsPerSecond: +floorPerSecond.toFixed(2),
      cpuMsPerRun: Object.fromEntries(Object.entries(per).map(([k, v]) => [k, +v.toFixed(2)])),
      loadAverage: { before: loadBefore, after: loadAverage() },
    };
    console.error(`eval: written to ${writeResult('eval', result)}`);
    return {
      result,
      rows: [
        row({ benchmark: 'eval', figure: `${ITEMS} HumanEval-style Python items through one batch, ${slots} slots (${s.launcher()})`, unit: 'runs/s', value: runsPerSecond, baseline: floorPerSecond, baselineIs: `each program exec'd directly, ${slots} at a time`, target: 'report', met: null }),
        row({ benchmark: 'eval', figure: 'CPU per run: runner Node + sandbox children + Postgres + API', unit: 'ms', value: cpuPerRun, baseline: per.floorMs, baselineIs: "the program exec'd directly", target: 'report', met: null }),
      ],
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
    await s.close();
  }
}

runIfMain(import.meta.url, benchEval);
