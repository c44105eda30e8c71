import { expect } from 'chai';
import { sqliteDatabase } from '../helpers/sqlite-file.js';
import { ECHO_INPUT, describeCompiler, runtimeError, succeeds } from './harness.js';
import { recipePrograms } from './recipe-programs.js';

// Bash, Lua, Perl, GNU Awk, Tcl and SQLite (the program is the SQL script), all on the
// scripting image: interpreted, no compile stage.

const hasNoCompileStage = (output: string) => (r: Parameters<ReturnType<typeof succeeds>>[0]) => (succeeds(output)(r), expect(r.compile_output).to.equal(null));

describeCompiler('bash-5.2', [
  ...recipePrograms('bash-5.2'),
  { name: 'hello world has no compile stage', code: 'echo hi\n', check: hasNoCompileStage('hi\n') },
  { name: 'echoes standard input with read', code: "IFS= read -r -d '' all\nprintf '%s' \"$all\"\n", input: ECHO_INPUT, check: succeeds(ECHO_INPUT) },
  { name: 'a non-zero exit is runtime_error with that exit code', code: 'echo "exiting 5" >&2\nexit 5\n', check: runtimeError(5, 'exiting 5') },
  { name: 'pipelines and coreutils work (16 processes)', code: 'printf "b\\na\\nc\\n" | sort | tr "\\n" " " | sed "s/ $//"\necho\n', check: succeeds('a b c\n') },
]);

describeCompiler('lua-5.4', [
  ...recipePrograms('lua-5.4'),
  { name: 'echoes standard input', code: 'io.write(io.read("a"))\n', input: ECHO_INPUT, check: succeeds(ECHO_INPUT) },
  { name: 'a runtime error is runtime_error 1 with the message', code: 'error("broken")\n', check: runtimeError(1, 'main.lua:1: broken') },
  { name: 'a non-zero exit is runtime_error with that exit code', code: 'io.stderr:write("exiting 6\\n")\nos.exit(6)\n', check: runtimeError(6, 'exiting 6') },
]);

describeCompiler('perl-5.36', [
  ...recipePrograms('perl-5.36'),
  { name: 'echoes standard input', code: 'local $/;\nprint <STDIN>;\n', input: ECHO_INPUT, check: succeeds(ECHO_INPUT) },
  { name: 'die is runtime_error 255 with the message', code: 'die "broken\\n";\n', check: runtimeError(255, 'broken') },
  { name: 'a syntax error is runtime_error with the message', code: 'my $x = ;\n', check: runtimeError(255, 'syntax error at main.pl line 1') },
]);

describeCompiler('gawk-5.2', [
  ...recipePrograms('gawk-5.2'),
  { name: 'echoes standard input line by line', code: '{ printf "%s%s", sep, $0; sep = "\\n" }\n', input: ECHO_INPUT, check: succeeds(ECHO_INPUT) },
  { name: 'sums a column of standard input', code: '{ s += $2 } END { print NR, s }\n', input: 'a 1\nb 2\nc 39\n', check: succeeds('3 42\n') },
  { name: 'exit n is runtime_error with that exit code', code: 'BEGIN { print "exiting 3" > "/dev/stderr"; exit 3 }\n', check: runtimeError(3, 'exiting 3') },
]);

describeCompiler('tcl-8.6', [
  ...recipePrograms('tcl-8.6'),
  { name: 'echoes standard input', code: 'fconfigure stdin -encoding utf-8\nfconfigure stdout -encoding utf-8\nputs -nonewline [read stdin]\n', input: ECHO_INPUT, check: succeeds(ECHO_INPUT) },
  { name: 'an uncaught error is runtime_error 1 with the message', code: 'error "broken"\n', check: runtimeError(1, 'broken') },
]);

describeCompiler('sqlite3-3.40', [
  ...recipePrograms('sqlite3-3.40'),
  {
    name: 'a script with tables, a join and an aggregate',
    code: "CREATE TABLE a(id INTEGER PRIMARY KEY, name TEXT);\nCREATE TABLE b(a_id INTEGER, n INTEGER);\nINSERT INTO a VALUES (1, 'x'), (2, 'y');\nINSERT INTO b VALUES (1, 10), (1, 20), (2, 5);\nSELECT name, sum(n) FROM a JOIN b ON b.a_id = a.id GROUP BY name ORDER BY name;\n",
    check: succeeds('x|30\ny|5\n'),
  },
  { name: 'an SQL error stops the script: runtime_error with the message', code: 'SELECT 1;\nSELECT * FROM missing;\nSELECT 2;\n', check: runtimeError(1, 'no such table: missing', '1\n') },
  {
    name: 'a database sent as db.sqlite beside the script is the one it runs against',
    code: '',
    program: {
      files: [
        { name: 'main.sql', content: "SELECT name FROM langs WHERE year < 1980 ORDER BY year;\nUPDATE langs SET year = year + 1;\nSELECT sum(year) FROM langs;\n" },
        { name: 'db.sqlite', content: sqliteDatabase([{ name: 'langs', sql: 'CREATE TABLE langs(name TEXT, year INTEGER)', rows: [['C', 1972], ['SQL', 1974], ['Python', 1991]] }]).toString('base64'), encoding: 'base64' },
      ],
    },
    check: succeeds(`C\nSQL\n${1973 + 1975 + 1992}\n`),
  },
]);
