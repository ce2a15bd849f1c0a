import type { TestingModuleBuilder } from '@nestjs/testing';
import type { DestinationStream } from 'pino';
import { LOG_DESTINATION } from '../../apps/api/src/observability/logger';

/** Every line the app logs, as written. */
export class CapturedLogs implements DestinationStream {
  readonly lines: string[] = [];
  write(line: string): void {
    this.lines.push(line);
  }
  get text(): string {
    return this.lines.join('');
  }
  entries(): Record<string, unknown>[] {
    return this.lines.map((line) => JSON.parse(line) as Record<string, unknown>);
  }
  /** The per-request lines (`request completed` / `request failed`) of one request id. */
  requestLines(reqId: string): Record<string, unknown>[] {
    return this.entries().filter((e) => e.reqId === reqId && typeof e.durationMs === 'number');
  }
}

/** startTestApp's module hook that sends the app's log lines to `logs` instead of stdout. */
export function capturingLogs(logs: CapturedLogs): (builder: TestingModuleBuilder) => TestingModuleBuilder {
  return (builder) => builder.overrideProvider(LOG_DESTINATION).useValue(logs);
}
