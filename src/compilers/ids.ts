// The compiler identifiers of the public contract, exactly as published.
// Which of them a deployment can run depends on the images installed (see catalogue.ts).

export const COMPILER_IDS = [
  'python-3.9.7',
  'python-2.7.18',
  'gcc-4.9',
  'g++-4.9',
  'openjdk-11',
  'dotnet-csharp-5',
  'dotnet-fsharp-5',
  'php-8.1',
  'ruby-3.0.2',
  'haskell-9.2.7',
] as const;

export type CompilerId = (typeof COMPILER_IDS)[number];

export function isCompilerId(value: unknown): value is CompilerId {
  return typeof value === 'string' && (COMPILER_IDS as readonly string[]).includes(value);
}
