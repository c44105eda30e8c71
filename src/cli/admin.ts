import { parseArgs } from 'node:util';
import { ConfigError, loadConfig } from '../config.js';
import { connect } from '../db/connect.js';
import { namedStatementsAllowed } from '../db/connections.js';
import { type Command, Listed, UsageError } from './command.js';
import { commandGroups } from './commands/index.js';
import { applyEnvFile } from './env-file.js';
import { formatResult } from './output.js';

// runbox-admin: results on stdout (tables on a terminal; JSON with --json or when
// piped), errors on stderr with a non-zero exit, --help everywhere. It reads the
// services' environment file first (env-file.ts).

const commands: Command[] = commandGroups.flat();

function findCommand(argv: string[]): { command: Command; rest: string[] } | undefined {
  for (const words of [2, 1]) {
    const name = argv.slice(0, words).join(' ');
    const command = commands.find((c) => c.name === name);
    if (command) return { command, rest: argv.slice(words) };
  }
  return undefined;
}

function listing(list: Command[]): string[] {
  const width = Math.max(...list.map((c) => c.name.length));
  return list.map((c) => `  ${c.name.padEnd(width)}  ${c.summary}`);
}

function overview(): string {
  return [
    'usage: runbox-admin <command> [options]   (every command takes --help; --json prints JSON)',
    '',
    ...listing(commands),
    '',
    'The environment comes from /etc/runbox/runbox.env when it exists (or the file RUNBOX_ENV_FILE names),',
    'under what is already set. Results print as tables on a terminal, as JSON with --json or when piped.',
  ].join('\n');
}

/** The commands whose first word is `group` (`account` → account create, account list, …). */
function groupOf(group: string): Command[] {
  return commands.filter((c) => c.name.startsWith(`${group} `));
}

function groupHelp(group: string): string {
  return [`usage: runbox-admin ${group} <command> [options]   (every command takes --help)`, '', ...listing(groupOf(group))].join('\n');
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
    const group = argv[0]!;
    if (groupOf(group).length > 0 && !commands.some((c) => c.name === group)) {
      // `runbox-admin account --help` lists the group; a group alone or a wrong second word, too (on stderr).
      const wantsHelp = argv.length === 2 && (argv[1] === '--help' || argv[1] === '-h');
      if (wantsHelp) {
        process.stdout.write(groupHelp(group) + '\n');
        return 0;
      }
      const said = argv.length > 1 ? `unknown command '${argv.slice(0, 2).join(' ')}'` : `'${group}' needs a command`;
      process.stderr.write(`runbox-admin: ${said}\n\n${groupHelp(group)}\n`);
      return 2;
    }
    process.stderr.write(`runbox-admin: unknown command '${argv.slice(0, 2).join(' ')}'\n\n${overview()}\n`);
    return 2;
  }
  const { command } = found;
  // --json is every command's option; the rest are the command's own.
  const json = found.rest.includes('--json') || !process.stdout.isTTY;
  const rest = found.rest.filter((a) => a !== '--json');
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
  try {
    applyEnvFile();
  } catch (err) {
    process.stderr.write(`runbox-admin: ${(err as Error).message}\n`);
    return 1;
  }
  const config = loadConfig();
  const handle = command.needsDb ? connect(config.RUNBOX_DATABASE_URL, { max: 4, applicationName: 'runbox-admin', namedStatements: namedStatementsAllowed(config) }) : undefined;
  try {
    const result = await command.run({
      values: parsed.values as Record<string, string | boolean | undefined>,
      positionals: parsed.positionals,
      config,
      db: handle?.db as never,
    });
    if (result instanceof Listed) {
      process.stdout.write(formatResult(result.page.items, { json }));
      const remark = result.remark();
      if (remark) process.stderr.write(`runbox-admin ${command.name}: ${remark}\n`);
    } else if (result !== undefined) process.stdout.write(formatResult(result, { json }));
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
