// A scripted editing session against the real sidecar, for as long as asked: typing into a
// document with an inline completion per keystroke (the previous one cancelled, as the
// extension does) and a pause at the end of each line, a chat turn every few seconds (streamed, in two conversations that are
// reset now and then), the document closed and reopened from time to time, and a status
// sample every few seconds (the sidecar's RSS and heap, its native sessions). Used by the
// soak test in `npm test` (one minute) and by test/bench/soak.ts (an hour).
import { CancellationTokenSource } from 'vscode-jsonrpc/node';
import { ChatRequest, ChatResetRequest, type ChatFinishReason } from '../../engine/protocol';
import { delay, fileUri, status, type Sidecar } from './sidecar';

export interface SoakSample {
  atMs: number;
  rss: number;
  heapUsed: number;
  external: number;
  openSessions: number;
  activeGenerations: number;
}

export interface SoakReport {
  samples: SoakSample[];
  /** Answered completion requests: when (ms from the start) and how long they took. */
  completions: { atMs: number; ms: number }[];
  cancelledCompletions: number;
  failedRequests: string[];
  chatTurns: Record<ChatFinishReason, number>;
  keystrokes: number;
}

const TYPED =
  'def total(items):\n    result = 0\n    for item in items:\n        result += item.price * item.count\n    return result\n\n';

export async function soak(
  s: Sidecar,
  opts: { durationMs: number; keyMs?: number; chatEveryMs?: number; sampleEveryMs?: number },
): Promise<SoakReport> {
  const keyMs = opts.keyMs ?? 120;
  const chatEveryMs = opts.chatEveryMs ?? 6000;
  const sampleEveryMs = opts.sampleEveryMs ?? 2000;
  const report: SoakReport = {
    samples: [],
    completions: [],
    cancelledCompletions: 0,
    failedRequests: [],
    chatTurns: { stop: 0, length: 0, cancelled: 0, error: 0 },
    keystrokes: 0,
  };
  const started = Date.now();
  const uri = fileUri('/tmp/leapfrog-soak/session.py');
  let text = '';
  let version = 0;
  const open = async () => {
    text = '# a scripted session\n';
    version = 1;
    await s.conn.sendNotification('textDocument/didOpen', {
      textDocument: { uri, languageId: 'python', version, text },
    });
  };
  await open();

  const pending: Promise<unknown>[] = [];
  let previous: CancellationTokenSource | undefined;
  let nextChat = started + chatEveryMs / 2;
  let nextSample = started;
  let chats = 0;
  const talking = new Set<string>();
  let at = 0;
  while (Date.now() - started < opts.durationMs) {
    const now = Date.now();
    if (now >= nextSample) {
      nextSample += sampleEveryMs;
      const st = await status(s);
      report.samples.push({
        atMs: now - started,
        rss: st.memory.rss,
        heapUsed: st.memory.heapUsed,
        external: st.memory.external,
        openSessions: st.openSessions,
        activeGenerations: st.activeGenerations,
      });
    }
    if (now >= nextChat) {
      nextChat += chatEveryMs;
      const turn = chats++;
      const conversationId = `soak-${turn % 2}`;
      // As in the chat view, a conversation takes its next message once its turn has ended
      // (the server refuses a second turn on a busy conversation).
      if (talking.has(conversationId)) continue;
      talking.add(conversationId);
      pending.push(
        (async () => {
          if (turn % 6 === 5) await s.conn.sendRequest(ChatResetRequest, { conversationId });
          const r = await s.conn.sendRequest(ChatRequest, {
            conversationId,
            message: `What does this code do? (turn ${turn})\n${text.slice(-200)}`,
            maxTokens: 32,
          });
          report.chatTurns[r.finishReason]++;
        })()
          .catch((e: unknown) => report.failedRequests.push(`chat: ${String(e)}`))
          .finally(() => talking.delete(conversationId)),
      );
    }
    // Every ~600 keystrokes the file is closed and opened again (its state must go with it).
    if (report.keystrokes > 0 && report.keystrokes % 600 === 0) {
      await s.conn.sendNotification('textDocument/didClose', { textDocument: { uri } });
      await open();
    }
    const ch = TYPED[at++ % TYPED.length]!;
    const lines = text.split('\n');
    const end = { line: lines.length - 1, character: lines[lines.length - 1]!.length };
    text += ch;
    version++;
    await s.conn.sendNotification('textDocument/didChange', {
      textDocument: { uri, version },
      contentChanges: [{ range: { start: end, end }, text: ch }],
    });
    report.keystrokes++;
    previous?.cancel();
    const cts = new CancellationTokenSource();
    previous = cts;
    const after = text.split('\n');
    const cursor = { line: after.length - 1, character: after[after.length - 1]!.length };
    const t0 = Date.now();
    pending.push(
      s.conn
        .sendRequest(
          'textDocument/inlineCompletion',
          { textDocument: { uri }, position: cursor, context: { triggerKind: 2 } },
          cts.token,
        )
        .then(
          () => report.completions.push({ atMs: t0 - started, ms: Date.now() - t0 }),
          (e: unknown) => {
            // A request the client cancelled answers with RequestCancelled (-32800).
            if ((e as { code?: number }).code === -32800) report.cancelledCompletions++;
            else report.failedRequests.push(`completion: ${String(e)}`);
          },
        ),
    );
    // A person pauses at the end of a line (chat, held while they type, runs then).
    await delay(ch === '\n' ? 10 * keyMs : keyMs);
  }
  await Promise.all(pending);
  return report;
}
