// Inline completion over the real sidecar: same text as `leapfrog complete`, and a typing
// storm that leaves only the last request running and leaks nothing.
import { strict as assert } from 'node:assert';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CancellationTokenSource, ResponseError } from 'vscode-jsonrpc/node';
import {
  cli,
  completeIn,
  delay,
  fileUri,
  root,
  settledStatus,
  skipReason,
  startSidecar,
  status,
  testEnv,
  testModel,
  THREADS,
  type Sidecar,
} from './sidecar';

const SOURCE = [
  'def fibonacci(n):',
  '    """Return the n-th Fibonacci number."""',
  '    if n < 2:',
  '        return n',
  '    ',
  '',
  'def main():',
  '    print(fibonacci(10))',
  '',
].join('\n');
const CURSOR = { line: 4, character: 4 };

describe('protocol: inline completion', function () {
  this.timeout(120_000);
  let s: Sidecar;
  const dir = mkdtempSync(join(tmpdir(), 'leapfrog-protocol-'));
  const file = join(dir, 'fib.py');
  writeFileSync(file, SOURCE);

  before(async function () {
    const why = skipReason();
    if (why) {
      console.log(`    SKIP protocol suite: ${why}`);
      this.skip();
    }
    s = await startSidecar();
    const st = await settledStatus(s);
    assert.equal(st.state, 'ready', `model did not load: ${st.message}\n${s.stderr()}`);
  });

  after(async () => {
    await s?.stop();
  });

  it('initialize → didOpen → inlineCompletion returns what `leapfrog complete` prints', async () => {
    const fromServer = await completeIn(s, fileUri(file), SOURCE, CURSOR);
    const r = spawnSync(
      process.execPath,
      [
        cli,
        'complete',
        '--model',
        testModel(),
        '--threads',
        THREADS,
        '--file',
        file,
        '--line',
        `${CURSOR.line}`,
        '--character',
        `${CURSOR.character}`,
        '--json',
      ],
      { cwd: root, env: testEnv, encoding: 'utf8', timeout: 60_000 },
    );
    assert.equal(r.status, 0, r.stderr);
    const fromCli = JSON.parse(r.stdout) as { text: string; stats: Record<string, number> };
    assert.equal(fromServer, fromCli.text);
    assert.equal(typeof fromCli.stats.generated, 'number');
  });

  it('leapfrog/prefetch computes the suggestion ahead; the request at that cursor is served from it', async () => {
    const expected = await completeIn(s, fileUri(join(dir, 'reference.py')), SOURCE, CURSOR);
    const uri = fileUri(join(dir, 'prefetched.py'));
    await s.conn.sendNotification('textDocument/didOpen', {
      textDocument: { uri, languageId: 'python', version: 1, text: SOURCE },
    });
    const before = await status(s);
    await s.conn.sendNotification('leapfrog/prefetch', { uri, position: CURSOR });
    // Ignored, not fatal: a document the server does not have, a position of the wrong type.
    await s.conn.sendNotification('leapfrog/prefetch', {
      uri: 'file:///nowhere.py',
      position: CURSOR,
    });
    await s.conn.sendNotification('leapfrog/prefetch', { uri, position: { line: 'x' } });
    let mid = await status(s);
    for (let i = 0; i < 200 && mid.counters.completions === before.counters.completions; i++) {
      await delay(25);
      mid = await status(s);
    }
    assert.equal(mid.counters.prefetches, before.counters.prefetches + 1);
    assert.equal(mid.counters.completions, before.counters.completions + 1, 'the prefetch ran');
    const list = (await s.conn.sendRequest('textDocument/inlineCompletion', {
      textDocument: { uri },
      position: CURSOR,
      context: { triggerKind: 2 },
    })) as { items: { insertText: string }[] };
    const after = await status(s);
    assert.equal(list.items[0]?.insertText ?? '', expected, 'the same text as asked directly');
    if (expected) {
      assert.equal(after.counters.typedAheadHits, before.counters.typedAheadHits + 1);
      assert.equal(after.counters.completions, mid.counters.completions, 'no second generation');
    }
  });

  it('a typing storm leaves only the last request running and leaks nothing', async function () {
    const interval = Number(process.env.LEAPFROG_STORM_INTERVAL_MS ?? 100);
    const chars = 200;
    this.timeout(chars * interval + 60_000);
    const uri = fileUri(join(dir, 'storm.py'));
    let text = 'def storm():\n    # ';
    let version = 1;
    await s.conn.sendNotification('textDocument/didOpen', {
      textDocument: { uri, languageId: 'python', version, text },
    });
    // Warm up, then measure.
    for (let i = 0; i < 3; i++) {
      await s.conn.sendRequest('textDocument/inlineCompletion', {
        textDocument: { uri },
        position: endOf(text),
        context: { triggerKind: 2 },
      });
    }
    const before = await status(s);

    const typed = 'the quick brown fox jumps over the lazy dog and keeps on typing; ';
    const pending: Promise<'items' | 'cancelled'>[] = [];
    let previous: CancellationTokenSource | undefined;
    for (let i = 0; i < chars; i++) {
      const ch = typed[i % typed.length];
      const at = endOf(text);
      text += ch;
      version++;
      await s.conn.sendNotification('textDocument/didChange', {
        textDocument: { uri, version },
        contentChanges: [{ range: { start: at, end: at }, text: ch }],
      });
      previous?.cancel(); // as the extension does when the user types on
      const cts = new CancellationTokenSource();
      previous = cts;
      pending.push(
        s.conn
          .sendRequest(
            'textDocument/inlineCompletion',
            { textDocument: { uri }, position: endOf(text), context: { triggerKind: 2 } },
            cts.token,
          )
          .then(
            () => 'items' as const,
            (e: unknown) => {
              if (e instanceof ResponseError && e.code === -32800) return 'cancelled' as const;
              throw e;
            },
          ),
      );
      if (i < chars - 1) await new Promise((r) => setTimeout(r, interval));
    }
    // Every earlier request settles at once (answered, superseded or cancelled) while the
    // last one is still in its hands: at most that one runs, nothing waits.
    const earlier = await Promise.all(pending.slice(0, -1));
    const afterLast = await status(s);
    assert.ok(
      afterLast.queuedCompletions + afterLast.activeGenerations <= 1,
      JSON.stringify(afterLast),
    );
    const outcomes = [...earlier, await pending[pending.length - 1]];
    assert.equal(outcomes[outcomes.length - 1], 'items', 'the last request is answered');

    const after = await status(s);
    assert.equal(after.activeGenerations, 0);
    assert.equal(after.queuedCompletions, 0);
    assert.equal(after.openSessions, before.openSessions, 'native sessions leaked');
    const growth = after.memory.rss - before.memory.rss;
    assert.ok(growth < 64 * 1024 * 1024, `rss grew by ${(growth / 1048576).toFixed(1)} MiB`);
    const c = after.counters;
    console.log(
      `      storm: ${outcomes.filter((o) => o === 'cancelled').length} cancelled by the client, ` +
        `${c.completionsSuperseded - before.counters.completionsSuperseded} superseded, ` +
        `${c.completions - before.counters.completions} generated, ${c.typedAheadHits - before.counters.typedAheadHits} typed-ahead; ` +
        `rss ${(growth / 1048576).toFixed(1)} MiB`,
    );
  });
});

function endOf(text: string): { line: number; character: number } {
  const lines = text.split('\n');
  return { line: lines.length - 1, character: lines[lines.length - 1].length };
}
