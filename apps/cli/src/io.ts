/** Where a command writes; main.ts binds it to the process, tests to buffers. */
export interface Io {
  out(text: string): void;
  err(text: string): void;
  env: NodeJS.ProcessEnv;
}
