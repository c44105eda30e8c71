// The npm piston-client package ships no types; what the tests use of it.
declare module 'piston-client' {
  interface PistonClient {
    runtimes(): Promise<unknown>;
    execute(language: string, code: string, config?: Record<string, unknown>): Promise<unknown>;
    execute(config: Record<string, unknown>): Promise<unknown>;
  }
  export function piston(opts?: { server?: string }): PistonClient;
  export default piston;
}
