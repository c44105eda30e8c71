import Type, { type Static } from 'typebox';

// The recipe format of rootfs/<image>.json: how an image is built, and how each
// compiler identifier it serves compiles and runs a program. Argv arrays only, never
// shell strings.

export const Argv = Type.Array(Type.String({ minLength: 1 }), { minItems: 1 });

/** Library names as the API lists them (`numpy`, `scikit-learn`, `data.table`, `commons-lang3`); the loader checks them. */
export const LIBRARY_NAME = /^[A-Za-z0-9][A-Za-z0-9._+-]*$/;
export const MAX_LIBRARY_NAME_LENGTH = 64;

/** A path in an image as a link's name or target: absolute, plain components, no `.` or `..` (the loader checks link names). */
export const IMAGE_PATH = /^(\/(?!\.{1,2}(?:\/|$))[A-Za-z0-9._+-]+)+$/;

/**
 * A library shipped with a compiler identifier, from Debian's packages: programs use it
 * with no install step (the image is read-only and the sandbox has no network).
 */
export const LibraryRecipe = Type.Object(
  {
    /** The Debian package that installs it; the build adds it to the image's packages. */
    package: Type.String({ pattern: '^[a-z0-9][a-z0-9.+-]+$' }),
    /** The real version in the image, stated openly (the build warns when the probe disagrees). */
    version: Type.String({ minLength: 1 }),
    /** What a program writes to use it: its import, #include or class name. */
    use: Type.String({ minLength: 1 }),
    /** Prints the library's version inside the image; run at build time like the compiler's probe. */
    probe: Argv,
  },
  { additionalProperties: false },
);

/** A file extension with its dot (`.cpp`, `.c++`, `.C`). */
const Extension = Type.String({ pattern: '^\\.[A-Za-z0-9+_-]+$' });

export const CompilerRecipe = Type.Object(
  {
    language: Type.String(),
    /** The real toolchain version in the image, stated openly. */
    version: Type.String(),
    /** Name of the source file written into the workspace. */
    source: Type.String({ pattern: '^[A-Za-z0-9_.-]+$' }),
    /** Derive the source file name from the program's single public class (Java). */
    sourceFromPublicClass: Type.Optional(Type.Boolean()),
    /**
     * The interpreter always skips its file's first line (escript): the runner writes an
     * empty line before the program unless the program starts with its own `#!` line,
     * so the program's first line is kept and escript's line numbers are the program's.
     */
    skipsFirstLine: Type.Optional(Type.Boolean()),
    /** Compile stage, run in its own sandbox; absent for interpreted languages. Its argv
     *  and run's may name the program's files (src/program/plan.ts): `{file}` the main file,
     *  `{main}` it without its extension, `{dir}` its directory, `{stem}` its name without
     *  extension and `{Stem}` as a class name, `{package}` the package it declares (with
     *  a dot after it); as whole entries, `{sources}` every file with one of the
     *  extensions of `sources` (sorted), `{others}` the same without the main file and
     *  `{options}` the request's compiler options. */
    compile: Type.Optional(Argv),
    /** How the class the run stage starts (`{entry}`) is found in the program's sources,
     *  as judges find it rather than from a file's name (src/program/entry-point.ts): each
     *  source (the main file first) with comments and literals blanked is searched for
     *  `main`; `scopes` are the declarations that open a named scope (group 1 the name:
     *  `class Main`, `object Main`), and the entry point must be directly inside one, or
     *  with `topLevel` outside every brace (Kotlin's `fun main`). `name` is what `{entry}`
     *  becomes: `{package}` the package of the file that holds it (with a dot after it),
     *  `{scope}` its enclosing scopes joined by `$` (a nested class's binary name), `{stem}`
     *  and `{Stem}` that file's. When no source has one, `{entry}` is `otherwise` where the
     *  recipe gives it (Prolog: main/0, the goal Kattis and DOMjudge run, unless the
     *  program starts itself with an initialization directive), else the build is a
     *  compile_error that says `missing`. */
    entry: Type.Optional(Type.Object(
      {
        main: Type.String({ minLength: 1 }),
        scopes: Type.Optional(Type.String({ minLength: 1 })),
        topLevel: Type.Optional(Type.Boolean()),
        name: Type.String({ minLength: 1 }),
        missing: Type.Optional(Type.String({ minLength: 1 })),
        otherwise: Type.Optional(Type.String({ minLength: 1 })),
      },
      { additionalProperties: false },
    )),
    /** For a language with no compile stage: the syntax check judges run before the first
     *  test (`python -m py_compile`, `ruby -c`, `perl -c`, `php -l`, `node --check`,
     *  `bash -n`, `luac -p`, R's `parse`), its argv with the tokens of `compile`. In a
     *  judged run (src/program/plan.ts, syntaxChecked) it is the compile stage: when it
     *  fails the result is compile_error with its messages and no test runs. */
    check: Type.Optional(Argv),
    /** Extensions of the files `{sources}` stands for (`.c`; `.cpp`, `.cc`, `.cxx`). */
    sources: Type.Optional(Type.Array(Type.String({ pattern: '^\\.[A-Za-z0-9+_-]+$' }), { minItems: 1 })),
    /** The file extensions that mean this language where a file rather than a compiler is
     *  named (a package's validator, interactor, grader or example submission): case
     *  matters (`.C` is C++, `.c` C). Default: the source's extension and `sources`'.
     *  src/compilers/languages.ts reads them. */
    extensions: Type.Optional(Type.Array(Extension, { minItems: 1 })),
    /** Extensions that mean this language only in one judge's packages, where they mean
     *  another language elsewhere (Kattis' `.pl` is Prolog, DOMjudge's and runbox's Perl):
     *  in that dialect this claim beats a general one. */
    dialects: Type.Optional(Type.Object(
      { kattis: Type.Optional(Type.Array(Extension, { minItems: 1 })), domjudge: Type.Optional(Type.Array(Extension, { minItems: 1 })) },
      { additionalProperties: false },
    )),
    /** A file of these extensions is this language only when its first line matches
     *  `pattern` (problemtools' rule: `.py` is Python 2 only under a `#!…python2` line), and
     *  then this claim beats every other. */
    shebang: Type.Optional(Type.Object(
      { extensions: Type.Array(Extension, { minItems: 1 }), pattern: Type.String({ minLength: 1 }) },
      { additionalProperties: false },
    )),
    /** The compile stage runs only when the program has this file (a build script it may leave out). */
    compileOnlyWith: Type.Optional(Type.String({ pattern: '^[A-Za-z0-9_.+-]+$' })),
    /** Compiler options a request may add (`{options}`): each must match one of these
     *  patterns whole. An option naming a path, a plugin or a wrapper is never allowed. */
    options: Type.Optional(Type.Array(Type.String({ minLength: 1 }), { minItems: 1 })),
    /** Workspace files the compile stage produces that the run stage needs (`{main}` and
     *  the others as in run); a path ending in `/` stands for every file below it, `./`
     *  for the whole workspace. */
    artifacts: Type.Optional(Type.Array(Type.String({ pattern: '^(\\./|[A-Za-z0-9_.{}$+-][A-Za-z0-9_.{}$/+-]*)$' }))),
    /** Run stage. */
    run: Argv,
    /** Extra environment for both stages, on top of the sandbox's allowlist. */
    env: Type.Optional(Type.Record(Type.String(), Type.String())),
    /** Prints the toolchain version. */
    probe: Argv,
    /** Libraries programs can use with no install step, by name (what `GET /api/compilers/` lists). */
    libraries: Type.Optional(Type.Record(Type.String(), LibraryRecipe)),
    hello: Type.Object({ code: Type.String(), output: Type.String() }),
    /** A program that uses a feature of the shipped version, and what it prints. */
    level: Type.Object(
      { code: Type.String({ minLength: 1 }), output: Type.String(), proves: Type.String({ minLength: 1 }) },
      { additionalProperties: false },
    ),
    /** Piston's name for the language (what its clients send) and its usual aliases; none:
     *  not offered through the Piston routes (another id of the same version is). */
    piston: Type.Optional(Type.Object(
      {
        language: Type.String({ pattern: '^[a-z0-9][a-z0-9.+#-]*$' }),
        aliases: Type.Array(Type.String({ minLength: 1 })),
        /** Piston's `runtime` of the package (gcc, dotnet), where Piston names one. */
        runtime: Type.Optional(Type.String({ minLength: 1 })),
      },
      { additionalProperties: false },
    )),
    /** Judge0 CE's language id, where Judge0 has one: never reused by another compiler. */
    judge0: Type.Optional(
      Type.Object(
        {
          id: Type.Integer({ minimum: 1 }),
          /** Judge0's display name, `{version}` standing for the installed version; default `<language> ({version})`. */
          name: Type.Optional(Type.String({ minLength: 1 })),
        },
        { additionalProperties: false },
      ),
    ),
    /** Jobe's language id (what Moodle's CodeRunner sends: c, cpp, java, python3…), where
     *  this compiler can serve it; the Jobe route runs the newest installed one of an id. */
    jobe: Type.Optional(Type.String({ pattern: '^[a-z0-9]+$' })),
    /** An id kept for its meaning but no longer built: runs answer 400 compiler_unavailable naming the successor. */
    retired: Type.Optional(Type.Object({ successor: Type.String({ minLength: 1 }) }, { additionalProperties: false })),
  },
  { additionalProperties: false },
);

export const ImageRecipe = Type.Object(
  {
    image: Type.String({ pattern: '^[a-z0-9][a-z0-9.+-]*$' }),
    description: Type.String(),
    suite: Type.Union([
      Type.Literal('bullseye'),
      Type.Literal('bookworm'),
      Type.Literal('trixie'),
      Type.Literal('sid'),
    ]),
    packages: Type.Array(Type.String()),
    /**
     * Symbolic links the build adds, path → target, both absolute: where programs
     * written for another service look for a toolchain (Judge0's
     * `/usr/local/gcc-9.2.0/bin/g++` → `/usr/bin/g++`). A link never replaces a file
     * the packages installed, and its target must exist in the image.
     */
    links: Type.Optional(Type.Record(Type.String(), Type.String({ pattern: IMAGE_PATH.source }))),
    /** Copy the build host's .NET SDK into the image (the .NET identifiers). */
    dotnetSdk: Type.Optional(Type.Boolean()),
    /** Built by `runbox-admin setup` and `image build --default`, so a fresh host can run programs and the tests. */
    default: Type.Optional(Type.Boolean()),
    /** Compiler identifiers (`<language>-<version>`, after the version the image ships) and how each runs. */
    compilers: Type.Record(Type.String(), CompilerRecipe, { minProperties: 1 }),
  },
  { additionalProperties: false },
);

export type LibraryRecipe = Static<typeof LibraryRecipe>;
export type CompilerRecipe = Static<typeof CompilerRecipe>;
export type ImageRecipe = Static<typeof ImageRecipe>;

/** What debootstrap installs: the recipe's packages, then its libraries' that are not among them. */
export function imagePackages(recipe: ImageRecipe): string[] {
  const packages = [...recipe.packages];
  for (const compiler of Object.values(recipe.compilers)) {
    for (const library of Object.values(compiler.libraries ?? {})) if (!packages.includes(library.package)) packages.push(library.package);
  }
  return packages;
}
