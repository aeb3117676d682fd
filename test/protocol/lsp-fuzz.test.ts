// The short LSP fuzzing run (the long one: test/bench/lsp-fuzz.ts): hostile input from fixed
// seeds, written as raw bytes to the real sidecar; after every burst a valid completion and
// a status request must be answered, the process alive, stderr free of stack traces. What a
// burst that breaks the framing may leave behind is argued in test/fuzz/lsp-fuzzer.ts.
import { strict as assert } from 'node:assert';
import { crashSign, LspFuzzer } from '../fuzz/lsp-fuzzer';
import {
  FRAMING_VARIANTS,
  FUZZ_URI_PREFIX,
  HostileInput,
  message,
  MESSAGE_BURSTS,
  type BurstKind,
  type FramingVariant,
} from '../fuzz/hostile-input';
import { Rng } from '../fuzz/rng';
import { RawSidecar } from '../fuzz/raw-sidecar';
import { delay, skipReason, testModel } from './sidecar';

const LIGHT_KINDS = MESSAGE_BURSTS.filter((k) => k !== 'big-documents' && k !== 'huge-message');

function bytesOf(seed: number, kinds: readonly BurstKind[]): Buffer {
  const input = new HostileInput(new Rng(seed), '/nonexistent/scratch');
  const rng = new Rng(seed + 1);
  return Buffer.concat(
    Array.from({ length: 40 }, () => Buffer.concat(input.burst(rng.pick(kinds)).frames)),
  );
}

async function waitReady(s: RawSidecar): Promise<void> {
  for (let i = 0; i < 600; i++) {
    const r = await s.request('leapfrog/status', undefined, 20_000);
    if ((r.result as { state?: string } | undefined)?.state !== 'loading') return;
    await delay(100);
  }
}

describe('protocol: LSP fuzzing (fixed seeds)', function () {
  this.timeout(120_000);

  before(function () {
    const why = skipReason();
    if (why) {
      console.log(`    SKIP protocol suite: ${why}`);
      this.skip();
    }
  });

  it('generates the same bytes from the same seed, other bytes from another', () => {
    const kinds = [...LIGHT_KINDS, 'framing' as const];
    assert.ok(bytesOf(7, kinds).equals(bytesOf(7, kinds)));
    assert.ok(!bytesOf(7, kinds).equals(bytesOf(8, kinds)));
  });

  it('answers a completion and a status after every kind of message burst (seed 1801)', async () => {
    const fuzzer = new LspFuzzer(1801, testModel());
    try {
      await fuzzer.start();
      // Every kind once, big documents three times (a 10 MB document, a 1 MB line, a binary
      // file), then a mixed run of the light kinds in the seed's order.
      for (const kind of MESSAGE_BURSTS) await fuzzer.run(fuzzer.input.burst(kind));
      for (const kind of ['big-documents', 'big-documents'] as const) {
        await fuzzer.run(fuzzer.input.burst(kind));
      }
      for (let i = 0; i < 30 && fuzzer.summary.failures.length === 0; i++) {
        await fuzzer.run(fuzzer.input.burst(fuzzer.rng.pick(LIGHT_KINDS)));
      }
    } finally {
      await fuzzer.stop();
    }
    const s = fuzzer.summary;
    assert.deepEqual(s.failures, []);
    assert.equal(s.healthChecks, s.bursts + 1);
    assert.ok(s.parseErrorsAnswered > 0, 'bodies that are not JSON get -32700 answers');
    assert.equal(s.sidecarsStarted, 1);
  });

  // What the fuzzer found, replayed as the exact inputs (each failed before its fix).
  it('replays the inputs that failed before their fixes', async () => {
    const open = (uri: unknown, text: unknown) =>
      message({
        method: 'textDocument/didOpen',
        params: { textDocument: { uri, languageId: 'python', version: 1, text } },
      });
    const complete = (id: number, uri: string, line: number, character: number) =>
      message({
        id,
        method: 'textDocument/inlineCompletion',
        params: {
          textDocument: { uri },
          position: { line, character },
          context: { triggerKind: 2 },
        },
      });
    const oneMegabyteLine = `x = [${'a1, '.repeat(1 << 18)}]`; // ~5 * 10^5 tokens
    const replays: { label: string; frames: Buffer[] }[] = [
      // A TypeError with a stack trace in fsPathOf (engine/server/checked-documents.ts).
      {
        label: 'didOpen with a number for uri and for text',
        frames: [open(42, 'x'), open(`${FUZZ_URI_PREFIX}n.py`, 42)],
      },
      // "the prompt is empty" from the engine: a plain-continuation model at 0:0 of a new file.
      {
        label: 'a completion in an empty file',
        frames: [
          open(`${FUZZ_URI_PREFIX}empty.py`, ''),
          complete(1, `${FUZZ_URI_PREFIX}empty.py`, 0, 0),
        ],
      },
      // RangeError (push(...ids)) in lookupCorpus, then in every later completion.
      {
        label: 'a document with one 1 MB line',
        frames: [
          open(`${FUZZ_URI_PREFIX}line.py`, oneMegabyteLine),
          complete(2, `${FUZZ_URI_PREFIX}line.py`, 0, oneMegabyteLine.length),
        ],
      },
    ];
    const fuzzer = new LspFuzzer(1800, testModel());
    try {
      await fuzzer.start();
      for (const r of replays) await fuzzer.run({ kind: 'wrong-types', ...r });
      // The ring takes another file's chunk in at most once a second (extra-context.ts): a
      // completion after that reads the 1 MB line's chunk.
      await delay(1100);
      await fuzzer.run({ kind: 'wrong-types', label: 'a completion 1 s later', frames: [] });
    } finally {
      await fuzzer.stop();
    }
    assert.deepEqual(fuzzer.summary.failures, []);
  });

  // Found by the long run (seed 20261201, burst 231): a chat turn still generating when the
  // client went away sent its deltas into the closed connection (a stack trace on the way out).
  it('exits cleanly when stdin closes in the middle of a chat turn', async () => {
    const s = new RawSidecar(testModel());
    try {
      await s.request('initialize', { processId: null, rootUri: null, capabilities: {} }, 20_000);
      await s.notify('initialized', {});
      await waitReady(s);
      const chat = { conversationId: 'gone', message: 'Write a long story.', maxTokens: 2000 };
      const answered = s.request('leapfrog/chat', chat, 2000).catch(() => undefined);
      await delay(300);
      const exit = await s.closeInput(15_000);
      await answered;
      assert.notEqual(exit, 'hung');
      assert.equal(exit === 'hung' ? 'hung' : exit.signal, null);
      assert.equal(crashSign(s.stderr), undefined, s.stderr);
    } finally {
      if (s.alive()) s.child.kill('SIGKILL');
    }
  });

  // The variants that break framing the most differently: a header block without a length,
  // a length that can never be read, a length that can never arrive.
  const framing: FramingVariant[] = [
    'no Content-Length',
    'negative Content-Length',
    'huge Content-Length',
  ];
  for (const [i, variant] of framing.entries()) {
    it(`after ${variant}: keeps serving or, once stdin closes, exits cleanly (seed ${1900 + i})`, async () => {
      assert.ok(FRAMING_VARIANTS.includes(variant));
      const fuzzer = new LspFuzzer(1900 + i, testModel());
      try {
        await fuzzer.start();
        await fuzzer.run(fuzzer.input.burst('framing', variant));
        // The fresh sidecar (or the one that kept serving) still serves after message bursts.
        await fuzzer.run(fuzzer.input.burst('wrong-types'));
      } finally {
        await fuzzer.stop();
      }
      const s = fuzzer.summary;
      assert.deepEqual(s.failures, []);
      const outcome = s.framing[variant] ?? {};
      assert.equal((outcome['kept serving'] ?? 0) + (outcome['closed cleanly'] ?? 0), 1);
    });
  }
});
