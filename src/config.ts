import { cpus } from 'node:os';
import Type, { type TSchema } from 'typebox';
import { Compile } from 'typebox/compile';

// Configuration comes from RUNBOX_* environment variables only. Each variable is
// declared once here with its schema, default and description; start-up validates
// them all and the table in docs/configuration.md is generated from the same
// declarations (`runbox-admin config docs --write`).

interface VarSpec<T> {
  schema: TSchema;
  default: T | (() => T);
  description: string;
  parse: (raw: string) => unknown;
}

const str = (description: string, def: string, schema: TSchema = Type.String()): VarSpec<string> => ({
  schema,
  default: def,
  description,
  parse: (raw) => raw,
});
const int = (description: string, def: number | (() => number), min: number, max: number): VarSpec<number> => ({
  schema: Type.Integer({ minimum: min, maximum: max }),
  default: def,
  description,
  parse: (raw) => (/^-?\d+$/.test(raw.trim()) ? Number(raw) : raw),
});
const bool = (description: string, def: boolean): VarSpec<boolean> => ({
  schema: Type.Boolean(),
  default: def,
  description,
  parse: (raw) => (['1', 'true', 'yes', 'on'].includes(raw) ? true : ['0', 'false', 'no', 'off', ''].includes(raw) ? false : raw),
});

/** The environment file of an installed host: the units' EnvironmentFile, and what runbox-admin reads. */
export const DEFAULT_ENV_FILE = '/etc/runbox/runbox.env';

export const CONFIG_VARS = {
  RUNBOX_ENV_FILE: str(
    `The file of NAME=value lines \`runbox-admin\` reads before anything else, under what its environment sets (the systemd units read ${DEFAULT_ENV_FILE} themselves). Unset: ${DEFAULT_ENV_FILE} when it exists; empty: no file.`,
    DEFAULT_ENV_FILE,
  ),
  RUNBOX_DATABASE_URL: str(
    'PostgreSQL connection URL. Empty: the local cluster that `npm run setup` creates (database `runbox` over the Unix socket).',
    'postgresql://%2Fvar%2Frun%2Fpostgresql/runbox',
  ),
  RUNBOX_DATABASE_POOLING: str(
    'What RUNBOX_DATABASE_URL reaches: `session` (PostgreSQL itself, or a pooler that gives each client its own server connection) or `transaction` (PgBouncer in transaction pooling mode: no named prepared statements, and LISTEN only over RUNBOX_DATABASE_LISTEN_URL).',
    'session',
    Type.Union([Type.Literal('session'), Type.Literal('transaction')]),
  ),
  RUNBOX_DATABASE_LISTEN_URL: str(
    'A direct connection to PostgreSQL (not through a pooler in transaction mode) for LISTEN: each process holds one, for every channel. Empty: RUNBOX_DATABASE_URL with `session` pooling; with `transaction` pooling none. `none`: no LISTEN (runner hosts of a large fleet: every admission wakes every listening runner). Without LISTEN, new jobs, run ends and cancellations are polled for every RUNBOX_POLL_MS, live output every 250 ms.',
    '',
  ),
  RUNBOX_DATABASE_POOL: int(
    'Connections in the pool of a process that runs the API or the sender (a runner alone holds 4 whatever its slots; each process one more to LISTEN): see docs/operating.md#scaling-out.',
    10,
    1,
    1000,
  ),
  RUNBOX_HOST: str('Address the API listens on.', '127.0.0.1'),
  RUNBOX_PORT: int('Port the API listens on.', 8080, 0, 65535),
  RUNBOX_COMPONENTS: str(
    'Which parts `npm start` runs, comma-separated: api, runner, sender.',
    'api,runner,sender',
    Type.String({ pattern: '^(api|runner|sender)(,(api|runner|sender))*$' }),
  ),
  RUNBOX_RUNNER_SLOTS: int('Runs at once on this runner host.', () => Math.max(1, cpus().length), 1, 1024),
  RUNBOX_RUNNER_RESERVED_SLOTS: int(
    "Slots of this runner kept as other accounts' share (a runner of one slot keeps none): one account's runs take them only while no other account's run waits, and an interactive run idle on input in one gives it back when another account's run waits (runs waiting on input hold a slot with no CPU). 0: none kept.",
    1,
    0,
    1024,
  ),
  RUNBOX_RUNNER_ID: str('Name of this runner in leases and health (default: hostname and pid).', ''),
  RUNBOX_LEASE_SECONDS: int('A running job whose runner stopped heart-beating this long goes back to the queue.', 60, 5, 3600),
  RUNBOX_MAX_ATTEMPTS: int('Starts of one job before it is failed and refunded.', 3, 1, 100),
  RUNBOX_POLL_MS: int('Queue polling interval behind LISTEN/NOTIFY.', 1000, 50, 60000),
  RUNBOX_DRAIN_SECONDS: int(
    'On SIGTERM, how long a runner lets the runs it has started finish (then hands them back to the queue), and how long an API process lets its requests and WebSocket runs finish. The default is a run stage at its 30 s timeout and room to store its result; the units\' TimeoutStopSec (60 s) must stay above it.',
    35,
    0,
    3600,
  ),
  RUNBOX_RETENTION_DAYS: int(
    "Submissions (code, input, result, callback deliveries) older than this many days are deleted, in small batches, by the API unit's background purge and by `runbox-admin submissions purge`; a purged submission's lookup answers 410 `submission_expired`. Usage counts are kept. 0: keep everything.",
    90,
    0,
    36_500,
  ),
  RUNBOX_IMAGES_DIR: str('Where compiler images are installed.', '/var/lib/runbox/images'),
  RUNBOX_RECIPES_DIR: str(
    'A directory of the operator\'s own image recipes (`<image>.json`), read beside the built-in ones in `rootfs/` and re-read when its files change. A recipe that reuses a built-in image name, compiler id or Judge0 id is refused (the built-in wins) and reported by `runbox-admin image catalogue`. Empty: the built-in recipes only.',
    '',
  ),
  RUNBOX_IMAGE_IMPORT_MAX_MB: int('`runbox-admin image import` refuses an archive whose files unpack to more than this many MiB.', 8_192, 1, 1_048_576),
  RUNBOX_IMAGE_IMPORT_MAX_ENTRIES: int('`runbox-admin image import` refuses an archive with more entries than this (images have 5,000 to 100,000).', 500_000, 10, 100_000_000),
  RUNBOX_DEBIAN_MIRROR: str(
    'Debian mirror that `runbox-admin image build` bootstraps images from (http(s):// or file://). Empty: the one the host\'s apt uses (`/etc/apt/sources.list`, `sources.list.d/*.list` and `*.sources`).',
    '',
  ),
  RUNBOX_LAUNCHER: str(
    'Sandbox launcher: auto (nsjail when found, else bubblewrap), nsjail or bwrap.',
    'auto',
    Type.Union([Type.Literal('auto'), Type.Literal('nsjail'), Type.Literal('bwrap')]),
  ),
  RUNBOX_NSJAIL: str('Path of the nsjail binary (default: searched on PATH).', ''),
  RUNBOX_SANDBOX_POOL: bool(
    "Pooled sandboxes: each slot's sandbox (namespaces, mounts, init) stays and runs stage after stage, each stage in new PID, mount, IPC and network namespaces with fresh tmpfs, devpts and cgroup. Off: a new sandbox for every stage (about 10 ms more CPU per run).",
    true,
  ),
  RUNBOX_SANDBOX_UID_BASE: int(
    'First uid/gid of the unprivileged sandbox users; slot N runs as base + N. Unset: each runner process claims the first free range of `RUNBOX_RUNNER_SLOTS` uids from this default up; set: it claims exactly base to base + slots − 1, or refuses to start naming the runner that holds them.',
    61000,
    1000,
    4_000_000_000,
  ),
  RUNBOX_DATA_CACHE_DIR: str(
    "Where a runner host keeps stored problems' test data, each file named by its sha-256 (readable by root only; no sandbox sees it). Runner processes of a host may share it.",
    '/var/cache/runbox/test-data',
  ),
  RUNBOX_DATA_CACHE_MB: int('How much test data the cache keeps, in MiB; the files used least recently go first.', 2048, 64, 1_048_576),
  RUNBOX_LOCK_DIR: str('Where runner processes lock the sandbox uid ranges they claim (one file per range).', '/run/runbox'),
  RUNBOX_CALLBACK_ALLOW_PRIVATE: bool('Allow callbacks to loopback and private addresses (local use and tests only).', false),
  RUNBOX_CALLBACK_TIMEOUT_MS: int('How long a callback receiver has to answer.', 10_000, 100, 120_000),
  RUNBOX_CALLBACK_MAX_ATTEMPTS: int('Delivery attempts of one callback before it is marked dead.', 10, 1, 100),
  RUNBOX_CALLBACK_BACKOFF_MS: int(
    'First retry delay of a callback; each retry doubles it, with ±25% jitter (the default spreads 10 attempts over about 24 hours).',
    180_000,
    10,
    86_400_000,
  ),
  RUNBOX_CALLBACK_CONCURRENCY: int('Callbacks one sender delivers at once.', 16, 1, 1000),
  RUNBOX_SMTP_URL: str('SMTP URL for usage emails (empty: emails stay in the outbox and are logged).', ''),
  RUNBOX_MAIL_FROM: str('From address of usage emails.', 'runbox <noreply@localhost>'),
  RUNBOX_MAIL_MAX_ATTEMPTS: int('Sending attempts of one usage email before it is marked dead.', 10, 1, 100),
  RUNBOX_MAIL_BACKOFF_MS: int(
    'First retry delay of a usage email; each retry doubles it, with ±25% jitter, as for callbacks (the default spreads 10 attempts over about 17 hours).',
    120_000,
    10,
    86_400_000,
  ),
  RUNBOX_ADMIN_HOST: str('Address of the admin listener (metrics); empty disables it.', ''),
  RUNBOX_ADMIN_PORT: int('Port of the admin listener.', 9090, 0, 65535),
  RUNBOX_MARKETPLACE_PROXY_SECRET: str(
    'Proxy secret of an API marketplace (RapidAPI): a request whose X-RapidAPI-Proxy-Secret equals it is the marketplace calling for its subscriber X-RapidAPI-User, without an API key. Empty: the marketplace headers mean nothing.',
    '',
  ),
  RUNBOX_MARKETPLACE_PLANS: str(
    'Marketplace subscription names (X-RapidAPI-Subscription) mapped to runbox plans, NAME:plan comma-separated, e.g. BASIC:free,PRO:pro; names not listed get the Free plan.',
    '',
    Type.String({ pattern: '^$|^[^:,\\s]+:[^:,\\s]+(,[^:,\\s]+:[^:,\\s]+)*$' }),
  ),
  RUNBOX_KEEP_ALIVE_TIMEOUT_MS: int(
    'How long the API keeps an idle keep-alive connection open: longer than the idle timeout of the load balancer in front (60 s on common ones), so the balancer, not the API, closes idle connections and never reuses one the API has just closed (a sporadic 502).',
    65_000,
    1000,
    3_600_000,
  ),
  RUNBOX_REQUEST_TIMEOUT_MS: int(
    'How long a client has to send a whole request, headers and body; a stalled one is answered 408 and closed.',
    15_000,
    1000,
    300_000,
  ),
  RUNBOX_WS_MAX_PER_KEY: int('WebSocket connections open at once with one key, on one API process; one more is answered 429.', 32, 1, 1_000_000),
  RUNBOX_WS_MAX_PER_ADDRESS: int(
    'WebSocket connections open at once from one client address (X-Forwarded-For with RUNBOX_TRUST_PROXY), on one API process, whatever the keys; one more is answered 429.',
    64,
    1,
    1_000_000,
  ),
  RUNBOX_WS_PING_MS: int('How often the API pings each WebSocket connection; one that has not answered the previous ping by then is closed.', 30_000, 100, 3_600_000),
  RUNBOX_WS_IDLE_MS: int(
    'A WebSocket connection with no message from its client and no run going for this long is closed (code 1000), checked at each ping.',
    300_000,
    100,
    86_400_000,
  ),
  RUNBOX_WS_MAX_UNREAD_BYTES: int(
    'Output the API holds for a WebSocket client that does not read it (beyond what the network buffers hold); past this nothing more is sent and the connection is closed.',
    4 * 1024 * 1024,
    1024,
    1024 * 1024 * 1024,
  ),
  RUNBOX_WS_STDIN_WRITES_PER_SECOND: int(
    "Statements storing an interactive run's stdin, per WebSocket connection (its runs together) and second; what the client sends meanwhile joins the next one. Each is a NOTIFY every runner hears.",
    50,
    1,
    10_000,
  ),
  RUNBOX_TRUST_PROXY: bool('Trust X-Forwarded-For from a load balancer.', false),
  RUNBOX_PUBLIC_URL: str(
    'Address people reach the service at, e.g. https://runbox.example.com: links in portal emails and invites; https makes the session cookie Secure. Empty: http://RUNBOX_HOST:RUNBOX_PORT.',
    '',
    Type.String({ pattern: '^$|^https?://[^/?#\\s]+/?$' }),
  ),
  RUNBOX_SIGNUP: str(
    'Who may sign up in the web portal: open (anyone), invite (only with a link from `runbox-admin account invite`) or closed.',
    'open',
    Type.Union([Type.Literal('open'), Type.Literal('invite'), Type.Literal('closed')]),
  ),
  RUNBOX_SIGNUPS_PER_HOUR: int(
    'Portal sign-ups one client address may make in a rolling hour (counted whether the address was new or already had an account); more are answered 429.',
    10,
    1,
    1_000_000,
  ),
  RUNBOX_LOG_LEVEL: str(
    'Log level.',
    'info',
    Type.Union(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'].map((l) => Type.Literal(l))),
  ),
} satisfies Record<string, VarSpec<unknown>>;

type Vars = typeof CONFIG_VARS;
type ValueOf<S> = S extends VarSpec<infer T> ? T : never;
export type Config = { -readonly [K in keyof Vars]: ValueOf<Vars[K]> };

export class ConfigError extends Error {}

const checkers = new Map(Object.entries(CONFIG_VARS).map(([k, v]) => [k, Compile(v.schema)]));

/** Reads and validates every RUNBOX_* variable; throws a ConfigError naming the first bad one. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const out: Record<string, unknown> = {};
  for (const [name, spec] of Object.entries(CONFIG_VARS) as [string, VarSpec<unknown>][]) {
    const raw = env[name];
    if (raw === undefined || (raw === '' && name === 'RUNBOX_DATABASE_URL')) {
      out[name] = typeof spec.default === 'function' ? (spec.default as () => unknown)() : spec.default;
      continue;
    }
    const value = spec.parse(raw);
    const check = checkers.get(name)!;
    if (!check.Check(value)) {
      const first = [...check.Errors(value)][0];
      throw new ConfigError(`${name}=${JSON.stringify(raw)} is invalid: ${first?.message ?? 'bad value'}`);
    }
    out[name] = value;
  }
  return out as Config;
}

/** Where people reach the service: RUNBOX_PUBLIC_URL, else the listening address. No trailing slash. */
export function publicUrl(config: Pick<Config, 'RUNBOX_PUBLIC_URL' | 'RUNBOX_HOST' | 'RUNBOX_PORT'>): string {
  if (config.RUNBOX_PUBLIC_URL) return config.RUNBOX_PUBLIC_URL.replace(/\/+$/, '');
  const host = ['0.0.0.0', '::', ''].includes(config.RUNBOX_HOST) ? '127.0.0.1' : config.RUNBOX_HOST;
  return `http://${host.includes(':') ? `[${host}]` : host}:${config.RUNBOX_PORT}`;
}

/** The configuration table of docs/configuration.md, generated from the declarations. */
export function configTableMarkdown(): string {
  const rows = Object.entries(CONFIG_VARS).map(([name, spec]) => {
    const def = typeof spec.default === 'function' ? 'number of cores' : JSON.stringify(spec.default);
    return `| \`${name}\` | ${def === '""' ? '(empty)' : `\`${def}\``} | ${spec.description} |`;
  });
  return ['| variable | default | meaning |', '|---|---|---|', ...rows].join('\n');
}
