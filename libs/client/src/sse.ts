/** One Server-Sent Event (WHATWG HTML §9.2): its id (empty when none was set), type and data. */
export interface ServerSentEvent {
  id: string;
  event: string;
  data: string;
}

/**
 * Reads a text/event-stream body into events: `field: value` lines, a blank line ending each
 * event, `:` comments (the service's keep-alives) skipped. The last id carries over to the
 * following events, as EventSource keeps it.
 */
export async function* serverSentEvents(body: AsyncIterable<Uint8Array>): AsyncGenerator<ServerSentEvent> {
  const decoder = new TextDecoder('utf-8');
  let buffer = '';
  let id = '';
  let event = '';
  let data: string[] = [];
  for await (const chunk of body) {
    buffer += decoder.decode(chunk, { stream: true });
    let end: number;
    while ((end = lineEnd(buffer)) >= 0) {
      const line = buffer.slice(0, end);
      buffer = buffer.slice(end + (buffer[end] === '\r' && buffer[end + 1] === '\n' ? 2 : 1));
      if (line === '') {
        if (data.length > 0) yield { id, event: event || 'message', data: data.join('\n') };
        event = '';
        data = [];
        continue;
      }
      if (line.startsWith(':')) continue;
      const colon = line.indexOf(':');
      const field = colon < 0 ? line : line.slice(0, colon);
      const value = colon < 0 ? '' : line.slice(colon + 1).replace(/^ /, '');
      if (field === 'id' && !value.includes('\u0000')) id = value;
      else if (field === 'event') event = value;
      else if (field === 'data') data.push(value);
    }
  }
}

function lineEnd(text: string): number {
  const cr = text.indexOf('\r');
  const lf = text.indexOf('\n');
  if (cr < 0) return lf;
  if (lf < 0) return cr === text.length - 1 ? -1 : cr; // a CR at the end may be half of CRLF
  return Math.min(cr, lf);
}
