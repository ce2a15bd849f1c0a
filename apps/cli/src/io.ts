/** Where a command writes; main.ts binds it to the process, tests to buffers. */
export interface Io {
  out: (text: string) => void;
  err: (text: string) => void;
  env: NodeJS.ProcessEnv;
  /** stderr is a terminal: progress may be drawn there. */
  errIsTTY?: boolean;
  /** How a command waits (retries); setTimeout when absent. */
  sleep?: (ms: number) => Promise<void>;
}

/**
 * Control characters (C0, DEL, C1), invisible format characters (bidirectional overrides,
 * zero-width characters, tags), line and paragraph separators and lone surrogates.
 */
const UNPRINTABLE = /[\p{Cc}\p{Cf}\p{Zl}\p{Zp}\p{Cs}]/gu;

/**
 * One line of output with every character that could steer a terminal or hide text written as
 * an escape (`\u001b` for ESC, `\u{e0041}` beyond U+FFFF). Text from the files a command reads
 * (chain names, ids, actors, server messages that quote them) goes through this, so `ESC[8m` in
 * a chain name cannot hide the result, nor a newline in an id forge a line of the report.
 */
export function printable(line: string): string {
  return line.replace(UNPRINTABLE, (c) => {
    const code = c.codePointAt(0)!;
    return code > 0xffff ? `\\u{${code.toString(16)}}` : `\\u${code.toString(16).padStart(4, '0')}`;
  });
}

/** Lines joined for output, each made printable: the only newlines are the ones between them. */
export function printableLines(lines: readonly string[]): string {
  return `${lines.map(printable).join('\n')}\n`;
}
