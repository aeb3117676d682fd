import { strict as assert } from 'node:assert';
import { Scheduler, type Job } from '../../engine/scheduler/scheduler';
import { FakeSession } from './fake-engine';

function job(
  session: FakeSession,
  kind: Job['kind'],
  key: string,
  text: string,
  onText?: (t: string) => void,
): Job {
  return {
    kind,
    key,
    start: () => {
      session.reply = () => [text];
      return session.generate([1], { maxTokens: 1000, stopAtEog: true } as never, (_id, t) =>
        onText?.(t),
      );
    },
  };
}

describe('scheduler', () => {
  it('a new completion for a document supersedes the running one and aborts its native work', async () => {
    const s = new FakeSession();
    const sched = new Scheduler();
    const first = sched.submit(job(s, 'completion', 'a', 'x'.repeat(50)));
    await new Promise((r) => setTimeout(r, 5));
    const second = sched.submit(job(s, 'completion', 'a', 'yy'));
    assert.equal((await first.outcome).status, 'superseded');
    assert.equal(s.calls[0].aborted, true);
    assert.equal((await second.outcome).status, 'finished');
    assert.equal(sched.snapshot().running, null);
  });

  it('a storm of requests leaves only the last one running', async () => {
    const s = new FakeSession();
    const sched = new Scheduler();
    const tickets = Array.from({ length: 20 }, (_, i) =>
      sched.submit(job(s, 'completion', 'doc', `r${i}`.repeat(20))),
    );
    const outcomes = await Promise.all(tickets.map((t) => t.outcome));
    assert.deepEqual(
      outcomes.slice(0, -1).map((o) => o.status),
      Array(19).fill('superseded'),
    );
    assert.equal(outcomes[19].status, 'finished');
    assert.ok(s.calls.length <= 2, `native generations started: ${s.calls.length}`);
    await sched.idle();
  });

  it('completions for different documents both run, in order', async () => {
    const s = new FakeSession();
    const sched = new Scheduler();
    const a = sched.submit(job(s, 'completion', 'a', 'aa'));
    const b = sched.submit(job(s, 'completion', 'b', 'bb'));
    assert.equal((await a.outcome).status, 'finished');
    assert.equal((await b.outcome).status, 'finished');
  });

  it('cancel aborts a running job and drops a queued one', async () => {
    const s = new FakeSession();
    const sched = new Scheduler();
    const a = sched.submit(job(s, 'completion', 'a', 'x'.repeat(100)));
    const b = sched.submit(job(s, 'completion', 'b', 'bb'));
    b.cancel();
    a.cancel();
    assert.equal((await a.outcome).status, 'cancelled');
    assert.equal((await b.outcome).status, 'cancelled');
    assert.equal(s.calls.length, 1);
    assert.equal(s.calls[0].aborted, true);
    assert.equal(sched.snapshot().counters.cancelled, 2);
  });

  it('a completion preempts chat, which resumes afterwards', async () => {
    const chatSession = new FakeSession();
    const compSession = new FakeSession();
    const sched = new Scheduler();
    let chatText = '';
    let starts = 0;
    const chat: Job = {
      kind: 'chat',
      key: 'conv',
      start: () => {
        starts++;
        const left = 40 - chatText.length;
        chatSession.reply = () => ['c'.repeat(left)];
        return chatSession.generate(
          [1],
          { maxTokens: left, stopAtEog: true } as never,
          (_i, t) => (chatText += t),
        );
      },
    };
    const c = sched.submit(chat);
    await new Promise((r) => setTimeout(r, 10));
    const comp = sched.submit(job(compSession, 'completion', 'doc', 'done'));
    assert.equal((await comp.outcome).status, 'finished');
    const outcome = await c.outcome;
    assert.equal(outcome.status, 'finished');
    assert.equal(starts, 2);
    assert.equal(chatSession.calls[0].aborted, true);
    assert.equal(chatText.length, 40);
    assert.equal(sched.snapshot().counters.preemptions, 1);
  });

  it('chat waits while the user types: it resumes only a pause after the last completion', async () => {
    const chatSession = new FakeSession();
    const compSession = new FakeSession();
    const hold = 120;
    const sched = new Scheduler(undefined, undefined, hold);
    const chatStarts: number[] = [];
    const chat: Job = {
      kind: 'chat',
      key: 'conv',
      start: () => {
        chatStarts.push(Date.now());
        chatSession.reply = () => ['c'.repeat(5)];
        return chatSession.generate([1], { maxTokens: 5, stopAtEog: true } as never, () => {});
      },
    };
    // Keystrokes 40 ms apart, each asking for a completion; a chat message in between.
    const t0 = Date.now();
    sched.submit(job(compSession, 'completion', 'doc', 'a'));
    const c = sched.submit(chat);
    let lastKey = t0;
    for (let i = 0; i < 4; i++) {
      await new Promise((r) => setTimeout(r, 40));
      lastKey = Date.now();
      sched.submit(job(compSession, 'completion', 'doc', 'b'));
    }
    assert.equal((await c.outcome).status, 'finished');
    assert.equal(chatStarts.length, 1, 'the chat turn started once, after the typing');
    assert.ok(
      chatStarts[0]! - lastKey >= hold - 5,
      `chat started ${chatStarts[0]! - lastKey} ms after the last keystroke`,
    );
  });

  it('a job whose start throws fails without blocking the queue', async () => {
    const s = new FakeSession();
    const sched = new Scheduler();
    const bad = sched.submit({
      kind: 'completion',
      key: 'a',
      start: () => {
        throw new Error('boom');
      },
    });
    const good = sched.submit(job(s, 'completion', 'b', 'ok'));
    const o = await bad.outcome;
    assert.equal(o.status, 'failed');
    assert.equal((await good.outcome).status, 'finished');
  });
});
