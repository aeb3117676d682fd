import { strict as assert } from 'node:assert';
import {
  CURSOR_SETTLE_MS,
  FOCUS_SETTLE_MS,
  PrefetchPolicy,
  type PrefetchEditor,
} from '../../extension/inline/prefetch-policy';

/** Timers that run only when the test moves the clock. */
class FakeClock {
  now = 0;
  private next = 1;
  private readonly timers = new Map<number, { at: number; fn: () => void }>();
  set(fn: () => void, ms: number): number {
    const id = this.next++;
    this.timers.set(id, { at: this.now + ms, fn });
    return id;
  }
  clear(id: unknown): void {
    this.timers.delete(id as number);
  }
  advance(ms: number): void {
    const end = this.now + ms;
    for (;;) {
      const due = [...this.timers.entries()]
        .filter(([, t]) => t.at <= end)
        .sort((a, b) => a[1].at - b[1].at)[0];
      if (!due) break;
      this.timers.delete(due[0]);
      this.now = due[1].at;
      due[1].fn();
    }
    this.now = end;
  }
}

function editor(
  uri: string,
  line: number,
  character: number,
  more: Partial<PrefetchEditor> = {},
): PrefetchEditor {
  return { uri, scheme: 'file', languageId: 'python', cursors: [{ line, character }], ...more };
}

function setup(allowed = (id: string) => id !== 'plaintext') {
  const clock = new FakeClock();
  const sent: string[] = [];
  let front: PrefetchEditor | undefined;
  const policy = new PrefetchPolicy({
    active: () => front,
    allows: allowed,
    send: (uri, p) => sent.push(`${uri}@${p.line}:${p.character}`),
    setTimer: (fn, ms) => clock.set(fn, ms),
    clearTimer: (h) => clock.clear(h),
  });
  return {
    clock,
    sent,
    policy,
    show(e: PrefetchEditor | undefined) {
      front = e;
    },
  };
}

describe('prefetch policy (when ghost text is prepared ahead of the keystroke)', () => {
  it('prefetches once a focused file has settled, not while tabs are switched through', () => {
    const t = setup();
    const a = editor('file:///a.py', 3, 4);
    const b = editor('file:///b.py', 7, 0);
    t.show(a);
    t.policy.focused(a);
    t.clock.advance(FOCUS_SETTLE_MS - 50);
    t.show(b);
    t.policy.focused(b);
    t.clock.advance(FOCUS_SETTLE_MS - 1);
    assert.deepEqual(t.sent, []);
    t.clock.advance(1);
    assert.deepEqual(t.sent, ['file:///b.py@7:0']);
  });

  it('waits for the cursor to rest, every move restarting the wait, and sends where it rests', () => {
    const t = setup();
    for (let col = 0; col < 5; col++) {
      const e = editor('file:///a.py', 10, col);
      t.show(e);
      t.policy.cursorMoved(e);
      t.clock.advance(CURSOR_SETTLE_MS / 2);
    }
    assert.deepEqual(t.sent, []);
    t.clock.advance(CURSOR_SETTLE_MS / 2);
    assert.deepEqual(t.sent, ['file:///a.py@10:4']);
  });

  it('does not prefetch for an editor that lost the focus during the wait', () => {
    const t = setup();
    const a = editor('file:///a.py', 1, 1);
    t.show(a);
    t.policy.cursorMoved(a);
    t.show(undefined); // e.g. the panel or another window took the focus
    t.clock.advance(CURSOR_SETTLE_MS);
    t.show(editor('file:///other.py', 2, 2));
    t.policy.cursorMoved(a);
    t.clock.advance(CURSOR_SETTLE_MS);
    assert.deepEqual(t.sent, []);
  });

  it('prefetches at the new cursor right after an accept, in the same document only', () => {
    const t = setup();
    t.show(editor('file:///a.py', 4, 12));
    t.policy.accepted('file:///a.py');
    t.clock.advance(0);
    assert.deepEqual(t.sent, ['file:///a.py@4:12']);
    t.policy.accepted('file:///elsewhere.py');
    t.clock.advance(0);
    assert.deepEqual(t.sent, ['file:///a.py@4:12']);
  });

  it('skips other schemes, gated languages and several cursors', () => {
    const t = setup();
    const cases: PrefetchEditor[] = [
      editor('git:/a.py', 0, 0, { scheme: 'git' }),
      editor('output:x', 0, 0, { scheme: 'output' }),
      editor('file:///notes.txt', 0, 0, { languageId: 'plaintext' }),
      editor('file:///a.py', 0, 0, {
        cursors: [
          { line: 0, character: 0 },
          { line: 1, character: 0 },
        ],
      }),
    ];
    for (const e of cases) {
      t.show(e);
      t.policy.focused(e);
      t.clock.advance(FOCUS_SETTLE_MS);
    }
    assert.deepEqual(t.sent, []);
    const untitled = editor('untitled:Untitled-1', 0, 3, { scheme: 'untitled' });
    t.show(untitled);
    t.policy.focused(untitled);
    t.clock.advance(FOCUS_SETTLE_MS);
    assert.deepEqual(t.sent, ['untitled:Untitled-1@0:3']);
  });

  it('sends nothing after dispose', () => {
    const t = setup();
    const a = editor('file:///a.py', 1, 1);
    t.show(a);
    t.policy.cursorMoved(a);
    t.policy.dispose();
    t.clock.advance(CURSOR_SETTLE_MS * 2);
    assert.deepEqual(t.sent, []);
  });
});
