// The ten compiler identifiers of the interface document, in its order. The catalogue
// (catalogue.ts) reads every identifier from the recipes; this list only puts these
// ten first wherever compilers are listed, as the interface document lists them.

export const INTERFACE_IDS = [
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
