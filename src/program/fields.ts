import Type, { type Static } from 'typebox';
import { PROGRAM_LIMITS, REQUEST_LIMITS, RETURN_FILES_LIMITS, RUN_LIMITS, STAGE_LIMIT_FLOORS, TIME_LIMIT_RULE } from '../limits.js';

// The fields of a request that make up its program beyond `code`, declared once for the
// REST run endpoints and the WebSocket run message (src/api/schemas.ts, src/api/ws/messages.ts).
// Their types are checked by the schema; their rules (names, sizes, the recipe's
// compiler options, the limits' ranges) by readProgram (program.ts), which says which
// element breaks which rule.

const P = PROGRAM_LIMITS;

export const ProgramFile = Type.Object(
  {
    name: Type.String({
      description: `A relative path in the workspace (/box), with directories (src/util/Parser.java): segments of letters, digits and . _ + -, no .. or dot-only segment, not under out/; at most ${P.fileNameMaxBytes} bytes; unique.`,
    }),
    content: Type.String({ description: `The file's content: text (at most ${REQUEST_LIMITS.codeMaxBytes} bytes, no NUL characters, like code), or Base64 with encoding base64 (any bytes).` }),
    encoding: Type.Optional(Type.Enum(['utf-8', 'utf8', 'base64'], { description: 'utf-8 (the default) or base64.' })),
  },
  { additionalProperties: false },
);
export type ProgramFile = Static<typeof ProgramFile>;

export const RunLimitsRequest = Type.Object(
  {
    time: Type.Optional(Type.Number({ description: `CPU seconds of each run (all its processes), ${STAGE_LIMIT_FLOORS.timeoutMs / 1000} to ${RUN_LIMITS.timeoutMs / 1000}: past it the run is a timeout (limit_exceeded "cpu"). Its wall-clock limit becomes ${TIME_LIMIT_RULE.wallPerCpu} × time + ${TIME_LIMIT_RULE.wallExtraMs / 1000} s (at most ${RUN_LIMITS.timeoutMs / 1000} s) unless wall_time says otherwise.` })),
    wall_time: Type.Optional(Type.Number({ description: `Wall-clock seconds of each run, ${STAGE_LIMIT_FLOORS.timeoutMs / 1000} to ${RUN_LIMITS.timeoutMs / 1000}: past it the run is a timeout (limit_exceeded "wall"), a sleeping or waiting program too.` })),
    memory: Type.Optional(Type.Integer({ description: `Memory of each run in KB (as the result reports it), ${STAGE_LIMIT_FLOORS.memoryBytes / 1024} to ${RUN_LIMITS.memoryBytes / 1024}: past it the run is memory_limit.` })),
  },
  { additionalProperties: false, description: "Lower limits for the program's runs (not its compile stage); above the service's is refused, naming the maximum." },
);
export type RunLimitsRequest = Static<typeof RunLimitsRequest>;

/** The program's fields besides `code`, spread into each run request's schema. */
export const ProgramFields = {
  files: Type.Optional(
    Type.Array(ProgramFile, {
      description: `Instead of code: the program's files (at most ${P.filesMax}, ${P.filesMaxBytes.toLocaleString('en-US')} decoded bytes together). The recipe builds them together: C and C++ every .c / .cpp file with -I of the workspace, Java and the other JVM and .NET languages every source file of the language, interpreters with the workspace on their module path (GET /api/compilers/ and docs/compilers.md).`,
    }),
  ),
  main: Type.Optional(Type.String({ description: 'With files: the name of the file that is the program (its text is what code would be); default: the first file.' })),
  args: Type.Optional(
    Type.Array(Type.String(), { description: `Command-line arguments of the program, passed as argv (never through a shell) to every run: at most ${P.argsMax}, each at most ${P.argMaxBytes} bytes.` }),
  ),
  compiler_options: Type.Optional(
    Type.Array(Type.String(), {
      description: `Options added to the compile stage, one option per element (-O2, -std=c11, --release=17): each must match one of the forms the compiler allows (GET /api/compilers/, compiler_options); at most ${P.compilerOptionsMax}.`,
    }),
  ),
  limits: Type.Optional(RunLimitsRequest),
  return_files: Type.Optional(
    Type.Boolean({
      description: `Bring back the files the program writes under /box/out/ (the result's files): the first ${RETURN_FILES_LIMITS.filesMax} by name within ${RETURN_FILES_LIMITS.bytesMax / 1024 / 1024} MiB; the rest are listed in files_dropped and files_truncated is true.`,
    }),
  ),
};

/** A request's program as the schema has checked it (code or files, and the rest). */
export interface ProgramRequest {
  code?: string | undefined;
  files?: ProgramFile[] | undefined;
  main?: string | undefined;
  args?: string[] | undefined;
  compiler_options?: string[] | undefined;
  limits?: RunLimitsRequest | undefined;
  return_files?: boolean | undefined;
}
