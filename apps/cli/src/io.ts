/** Where a command writes; main.ts binds it to the process, tests to buffers. */
export interface Io {
  out(text: string): void;
  err(text: string): void;
  env: NodeJS.ProcessEnv;
  /** stderr is a terminal: progress may be drawn there. */
  errIsTTY?: boolean;
  /** How a command waits (retries); setTimeout when absent. */
  sleep?: (ms: number) => Promise<void>;
}
