// Chat and explain over the real sidecar: streamed deltas, cancellation, two conversations.
import { strict as assert } from 'node:assert';
import { CancellationTokenSource } from 'vscode-jsonrpc/node';
import {
  ChatDeltaNotification,
  ChatRequest,
  ExplainRequest,
  type ChatDeltaParams,
  type ChatResult,
} from '../../engine/protocol';
import { settledStatus, skipReason, startSidecar, status, type Sidecar } from './sidecar';

describe('protocol: chat and explain', function () {
  this.timeout(120_000);
  let s: Sidecar;
  const deltas = new Map<string, ChatDeltaParams[]>();

  before(async function () {
    const why = skipReason();
    if (why) {
      console.log(`    SKIP protocol suite: ${why}`);
      this.skip();
    }
    s = await startSidecar();
    s.conn.onNotification(ChatDeltaNotification, (d) => {
      const list = deltas.get(d.conversationId) ?? [];
      list.push(d);
      deltas.set(d.conversationId, list);
    });
    assert.equal((await settledStatus(s)).state, 'ready', s.stderr());
  });

  after(async () => {
    await s?.stop();
  });

  function streamed(id: string): string {
    return (deltas.get(id) ?? [])
      .filter((d) => !d.done)
      .map((d) => d.delta)
      .join('');
  }

  it('streams deltas that add up to the reply, then a done notification', async () => {
    const r: ChatResult = await s.conn.sendRequest(ChatRequest, {
      conversationId: 'c1',
      message: 'Once upon a time',
      maxTokens: 24,
    });
    assert.ok(['stop', 'length'].includes(r.finishReason), r.finishReason);
    assert.equal(streamed('c1'), r.text);
    const last = deltas.get('c1')!.at(-1)!;
    assert.equal(last.done, true);
    assert.equal(last.finishReason, r.finishReason);
    assert.ok(r.stats.promptTokens > 0);
  });

  it('runs several conversations', async () => {
    const [a, b] = await Promise.all([
      s.conn.sendRequest(ChatRequest, {
        conversationId: 'c2',
        message: 'Tell me about a dog',
        maxTokens: 16,
      }),
      s.conn.sendRequest(ChatRequest, {
        conversationId: 'c3',
        message: 'Tell me about a cat',
        maxTokens: 16,
      }),
    ]);
    assert.equal(streamed('c2'), a.text);
    assert.equal(streamed('c3'), b.text);
  });

  it('cancels a turn ($/cancelRequest) and keeps serving', async () => {
    // A tiny test model can finish a whole reply before the cancel lands, so try a few
    // times: at least one turn must end cancelled, and every one must end cleanly.
    const reasons: string[] = [];
    for (let i = 0; i < 10 && !reasons.includes('cancelled'); i++) {
      const id = `c4-${i}`;
      const cts = new CancellationTokenSource();
      const p = s.conn.sendRequest(
        ChatRequest,
        { conversationId: id, message: 'Write a long story', maxTokens: 4096 },
        cts.token,
      );
      cts.cancel();
      const r = await p;
      reasons.push(r.finishReason);
      assert.equal(streamed(id), r.text);
    }
    assert.ok(reasons.includes('cancelled'), `finish reasons: ${reasons.join(', ')}`);
    const st = await status(s);
    assert.equal(st.activeChats, 0);
    assert.equal(st.activeGenerations, 0);
    const again = await s.conn.sendRequest(ChatRequest, {
      conversationId: 'c4-0',
      message: 'Short one',
      maxTokens: 8,
    });
    assert.ok(['stop', 'length'].includes(again.finishReason));
  });

  it('cancels a turn with leapfrog/chatCancel while it streams', async () => {
    const p = s.conn.sendRequest(ChatRequest, {
      conversationId: 'c5',
      message: 'Write a long story',
      maxTokens: 4096,
    });
    // Cancel as soon as the first delta arrives (or right away if none comes quickly).
    for (let i = 0; i < 200 && !deltas.get('c5')?.length; i++)
      await new Promise((r) => setTimeout(r, 5));
    await s.conn.sendRequest('leapfrog/chatCancel', { conversationId: 'c5' });
    const r = await p;
    assert.ok(['cancelled', 'stop', 'length'].includes(r.finishReason));
    assert.equal(streamed('c5'), r.text);
  });

  it('explains a selection', async () => {
    const r = await s.conn.sendRequest(ExplainRequest, {
      conversationId: 'e1',
      selection: 'for i in range(3):\n    print(i)',
      fileName: 'loop.py',
      languageId: 'python',
      maxTokens: 16,
    });
    assert.ok(['stop', 'length'].includes(r.finishReason));
    assert.ok(r.stats.promptTokens > 10);
    assert.equal(streamed('e1'), r.text);
  });
});
