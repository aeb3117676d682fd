// Server-sent events, as OpenAI-compatible servers stream (`data: {...}` blocks, `data:
// [DONE]` at the end) and llama.cpp's /infill and /completion do (the same blocks, no
// [DONE]). Bytes arrive cut anywhere — inside a line, a UTF-8 character, or between the
// \r and \n of one line ending — so the parser keeps what is incomplete for the next chunk.

export class SseParser {
  private buffer = '';
  private data: string[] = [];
  private readonly decoder = new TextDecoder();

  /** Feeds bytes (or text); returns the data of every event completed by them. */
  push(chunk: Uint8Array | string): string[] {
    this.buffer += typeof chunk === 'string' ? chunk : this.decoder.decode(chunk, { stream: true });
    const events: string[] = [];
    for (;;) {
      const m = /\r\n|\r|\n/.exec(this.buffer);
      // A lone \r at the end may be the first half of \r\n: wait for the next chunk.
      if (!m || (m[0] === '\r' && m.index === this.buffer.length - 1)) break;
      const line = this.buffer.slice(0, m.index);
      this.buffer = this.buffer.slice(m.index + m[0].length);
      this.line(line, events);
    }
    return events;
  }

  /** The stream ended: an event that was not closed by a blank line still counts. */
  end(): string[] {
    const events: string[] = [];
    const rest = this.buffer + this.decoder.decode();
    this.buffer = '';
    if (rest) this.line(rest.replace(/\r$/, ''), events);
    this.line('', events);
    return events;
  }

  private line(line: string, events: string[]): void {
    if (line === '') {
      if (this.data.length) events.push(this.data.join('\n'));
      this.data = [];
      return;
    }
    if (line.startsWith(':')) return; // a comment (keep-alive)
    const colon = line.indexOf(':');
    const field = colon < 0 ? line : line.slice(0, colon);
    let value = colon < 0 ? '' : line.slice(colon + 1);
    if (value.startsWith(' ')) value = value.slice(1);
    if (field === 'data') this.data.push(value);
    // `event`, `id` and `retry` carry nothing these APIs use.
  }
}

/**
 * Reads a streamed response and hands each event's data to `onData`, until the stream ends,
 * `[DONE]` arrives, or `onData` returns false. A server that answered with plain JSON
 * (it ignored `stream: true`) is read as one event. `onChunk` runs on every chunk of bytes
 * (the caller pushes its idle deadline back).
 */
export async function readEvents(
  res: Response,
  onData: (data: string) => boolean | void,
  onChunk: () => void = () => {},
): Promise<void> {
  const body = res.body;
  if (!body) return;
  const type = res.headers.get('content-type') ?? '';
  if (type.includes('application/json')) {
    const text = await res.text();
    onChunk();
    if (text.trim()) onData(text);
    return;
  }
  const parser = new SseParser();
  const reader = body.getReader();
  try {
    for (;;) {
      const { done, value } = await reader.read();
      const events = done ? parser.end() : parser.push(value);
      if (!done) onChunk();
      for (const data of events) {
        if (data.trim() === '[DONE]' || onData(data) === false) return;
      }
      if (done) return;
    }
  } finally {
    // Not waiting for the server to finish: the caller aborts the request if it ran early.
    reader.releaseLock();
  }
}
