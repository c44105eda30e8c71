// Program output is arbitrary bytes; results carry text. Invalid UTF-8 becomes U+FFFD,
// and so does NUL, which JSON can carry but Postgres jsonb (where results are stored)
// cannot, so whatever a program prints is delivered safely.
const decoder = new TextDecoder('utf-8', { fatal: false });

export function outputText(bytes: Buffer): string {
  return decoder.decode(bytes).replace(/\u0000/g, '\uFFFD');
}
