import { sinkKind } from './kinds';
import type { Sink, SinkTarget } from './sink';

/**
 * The sink of a destination, opened by its kind's module; nothing connects before deliver(). Throws
 * only for a URL that destinationUrlProblem refuses (the engine opens sinks of stored, validated destinations).
 */
export function openSink(target: SinkTarget): Sink {
  return sinkKind(target.kind).open(target);
}
