import type { DestinationStream } from 'pino';

/**
 * LOG_FORMAT=pretty: each JSON line as `12:00:00.000 INFO  [Context] message key=value …`, for
 * a developer's terminal. (pino-pretty would bring a dozen packages for this.)
 */
export function prettyLines(destination: DestinationStream): DestinationStream {
  return {
    write(line: string): void {
      destination.write(prettyLine(line));
    },
  };
}

export function prettyLine(line: string): string {
  let entry: Record<string, unknown>;
  try {
    entry = JSON.parse(line) as Record<string, unknown>;
  } catch {
    return line;
  }
  const { time, level, msg, context, err, stack, ...rest } = entry;
  const clock = typeof time === 'string' ? time.slice(11, 23) : '';
  const where = typeof context === 'string' ? ` [${context}]` : '';
  const fields = Object.entries(rest)
    .map(([key, value]) => ` ${key}=${typeof value === 'string' ? value : JSON.stringify(value)}`)
    .join('');
  const trace = (err as { stack?: unknown } | undefined)?.stack ?? stack;
  const details = typeof trace === 'string' ? `\n${trace}` : '';
  return `${clock} ${String(level).toUpperCase().padEnd(5)}${where} ${typeof msg === 'string' ? msg : msg === undefined ? '' : JSON.stringify(msg)}${fields}${details}\n`;
}
