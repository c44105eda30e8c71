import { parseArgs } from 'node:util';
import { ConfigError, loadConfig } from '../config.js';
import { connect } from '../db/connect.js';
import { type Command, UsageError } from './command.js';
import { commandGroups } from './commands/index.js';

// runbox-admin: JSON on stdout, errors on stderr with a non-zero exit, --help everywhere.

const commands: Command[] = commandGroups.flat();

function findCommand(argv: string[]): { command: Command; rest: string[] } | undefined {
  for (const words of [2, 1]) {
    const name = argv.slice(0, words).join(' ');
    const command = commands.find((c) => c.name === name);
    if (command) return { command, rest: argv.slice(words) };
  }
  return undefined;
}

function overview(): string {
  const width = Math.max(...commands.map((c) => c.name.length));
  return [
    'usage: runbox-admin <command> [options]   (every command takes --help)',
    '',
    ...commands.map((c) => `  ${c.name.padEnd(width)}  ${c.summary}`),
  ].join('\n');
}

function commandHelp(c: Command): string {
  return [`usage: runbox-admin ${c.name} [options]`, '', c.summary, ...(c.help ? ['', c.help] : [])].join('\n');
}

async function main(argv: string[]): Promise<number> {
  if (argv.length === 0 || argv[0] === '--help' || argv[0] === '-h' || argv[0] === 'help') {
    process.stdout.write(overview() + '\n');
    return argv.length === 0 ? 2 : 0;
  }
  const found = findCommand(argv);
  if (!found) {
    process.stderr.write(`runbox-admin: unknown command '${argv.slice(0, 2).join(' ')}'\n\n${overview()}\n`);
    return 2;
  }
  const { command, rest } = found;
  if (rest.includes('--help') || rest.includes('-h')) {
    process.stdout.write(commandHelp(command) + '\n');
    return 0;
  }
  let parsed;
  try {
    parsed = parseArgs({ args: rest, options: command.options ?? {}, allowPositionals: command.allowPositionals ?? false, strict: true });
  } catch (err) {
    process.stderr.write(`runbox-admin ${command.name}: ${(err as Error).message}\n(see runbox-admin ${command.name} --help)\n`);
    return 2;
  }
  const config = loadConfig();
  const handle = command.needsDb ? connect(config.RUNBOX_DATABASE_URL, { max: 4, applicationName: 'runbox-admin' }) : undefined;
  try {
    const result = await command.run({
      values: parsed.values as Record<string, string | boolean | undefined>,
      positionals: parsed.positionals,
      config,
      db: handle?.db as never,
    });
    if (result !== undefined) process.stdout.write(JSON.stringify(result, null, 2) + '\n');
    return 0;
  } catch (err) {
    if (err instanceof UsageError) {
      process.stderr.write(`runbox-admin ${command.name}: ${err.message}\n(see runbox-admin ${command.name} --help)\n`);
      return 2;
    }
    process.stderr.write(`runbox-admin ${command.name}: ${(err as Error).message}\n`);
    return 1;
  } finally {
    await handle?.close();
  }
}

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (err: unknown) => {
    process.stderr.write(`runbox-admin: ${err instanceof ConfigError ? err.message : String((err as Error)?.stack ?? err)}\n`);
    process.exitCode = 1;
  },
);
