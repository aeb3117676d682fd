// The server-sent-events parser reads streams cut anywhere: inside a line, between \r and
// \n, inside a UTF-8 character; comments, multi-line data and a last event with no blank
// line after it follow the SSE rules.
import { strict as assert } from 'node:assert';
import { SseParser } from '../../engine/remote/sse';

function parseAll(chunks: (string | Uint8Array)[]): string[] {
  const p = new SseParser();
  const out: string[] = [];
  for (const c of chunks) out.push(...p.push(c));
  out.push(...p.end());
  return out;
}

describe('remote: server-sent events', () => {
  const stream =
    ': keep-alive\r\n' +
    'data: {"content":"héllo ✓"}\r\n\r\n' +
    'event: message\nid: 7\ndata:{"content":" world"}\n\n' +
    'data: line one\ndata: line two\n\n' +
    'data: [DONE]\n\n';
  const expected = [
    '{"content":"héllo ✓"}',
    '{"content":" world"}',
    'line one\nline two',
    '[DONE]',
  ];

  it('reads a whole stream in one piece', () => {
    assert.deepEqual(parseAll([stream]), expected);
  });

  it('gives the same events however the bytes are cut (every cut point, 1–3 cuts)', () => {
    const bytes = new TextEncoder().encode(stream);
    for (let a = 1; a < bytes.length; a++) {
      assert.deepEqual(parseAll([bytes.slice(0, a), bytes.slice(a)]), expected, `cut at ${a}`);
    }
    for (let size = 1; size <= 3; size++) {
      const pieces: Uint8Array[] = [];
      for (let i = 0; i < bytes.length; i += size) pieces.push(bytes.slice(i, i + size));
      assert.deepEqual(parseAll(pieces), expected, `pieces of ${size}`);
    }
  });

  it('a \\r\\n cut between \\r and \\n is one line end, not an empty line', () => {
    assert.deepEqual(parseAll(['data: a\r', '\ndata: b\r\n\r\n']), ['a\nb']);
  });

  it('counts a last event that the stream ended without a blank line', () => {
    assert.deepEqual(parseAll(['data: {"stop":true}']), ['{"stop":true}']);
    assert.deepEqual(parseAll(['data: x\n']), ['x']);
  });

  it('ignores comments and blank lines that close no data', () => {
    assert.deepEqual(parseAll([':ping\n\n\n:ping\n\n']), []);
  });
});
