// Hostile LSP input, generated from a seed: every burst is a list of frames (the exact bytes
// written to the sidecar's stdin). Message bursts keep LSP framing intact (each frame has a
// correct Content-Length) and attack what is inside; framing bursts break the framing itself.
import { Rng } from './rng';

export type BurstKind =
  | 'not-json'
  | 'not-json-rpc'
  | 'wrong-types'
  | 'positions'
  | 'big-documents'
  | 'invalid-utf8'
  | 'edits'
  | 'unknown-documents'
  | 'cancel'
  | 'huge-message'
  | 'framing';

export const MESSAGE_BURSTS: readonly BurstKind[] = [
  'not-json',
  'not-json-rpc',
  'wrong-types',
  'positions',
  'big-documents',
  'invalid-utf8',
  'edits',
  'unknown-documents',
  'cancel',
  'huge-message',
];

export const FRAMING_VARIANTS = [
  'no Content-Length',
  'negative Content-Length',
  'huge Content-Length',
  'short Content-Length',
  'long Content-Length',
  'Content-Length not a number',
  'header without a colon',
  'missing \\r\\n\\r\\n',
  'bare \\n line ends',
  'raw binary',
] as const;
export type FramingVariant = (typeof FRAMING_VARIANTS)[number];

export interface Burst {
  kind: BurstKind;
  /** What was sent, in a few words (for failure messages and the long run's summary). */
  label: string;
  frames: Buffer[];
}

/** Where the fuzzer's documents live: never the probe document the health check uses. */
export const FUZZ_URI_PREFIX = 'file:///leapfrog-fuzz/';

export function frame(body: string | Buffer): Buffer {
  const bytes = typeof body === 'string' ? Buffer.from(body, 'utf8') : body;
  return Buffer.concat([Buffer.from(`Content-Length: ${bytes.length}\r\n\r\n`, 'ascii'), bytes]);
}

export function message(msg: Record<string, unknown>): Buffer {
  return frame(JSON.stringify({ jsonrpc: '2.0', ...msg }));
}

/** Generates bursts; it remembers which fuzz documents it opened so edits can target them. */
export class HostileInput {
  private nextId = 1;
  private open = new Map<string, number>(); // uri → version
  private bigDocs = 0;

  constructor(
    readonly rng: Rng,
    /** A folder the download template may name (the fuzzer's own temporary folder). */
    private readonly scratchFolder: string,
  ) {}

  /** `framingVariant` picks one of FRAMING_VARIANTS for a framing burst (else the seed does). */
  burst(kind: BurstKind, framingVariant?: FramingVariant): Burst {
    const frames: Buffer[] = [];
    const label =
      kind === 'framing' ? this.framing(frames, framingVariant) : this.fill(kind, frames);
    return { kind, label, frames };
  }

  /** A message burst of a kind picked from the seed. */
  randomBurst(): Burst {
    return this.burst(this.rng.pick(MESSAGE_BURSTS));
  }

  private fill(kind: BurstKind, out: Buffer[]): string {
    const r = this.rng;
    switch (kind) {
      case 'not-json': {
        const n = r.int(1, 8);
        for (let i = 0; i < n; i++) out.push(frame(this.notJson()));
        return `${n} bodies that are not JSON`;
      }
      case 'not-json-rpc': {
        const n = r.int(1, 10);
        for (let i = 0; i < n; i++) out.push(frame(JSON.stringify(this.notJsonRpc())));
        return `${n} JSON bodies that are not JSON-RPC`;
      }
      case 'wrong-types': {
        const n = r.int(1, 12);
        const methods: string[] = [];
        for (let i = 0; i < n; i++) {
          const [method, params] = this.mutatedCall();
          methods.push(method);
          out.push(this.call(method, params));
        }
        return `wrong types: ${methods.join(', ')}`;
      }
      case 'positions': {
        const uri = this.openDoc(out, 'def f(x):\n    return x\n\nprint(f(1))\n');
        const n = r.int(1, 8);
        for (let i = 0; i < n; i++) {
          const position = { line: this.badNumber(), character: this.badNumber() };
          out.push(
            this.request('textDocument/inlineCompletion', { textDocument: { uri }, position }),
          );
          out.push(this.notify('leapfrog/prefetch', { uri, position }));
        }
        return `${n} completions and prefetches at bad positions`;
      }
      case 'big-documents': {
        // In turn, so that any three big-document bursts cover all three.
        const which = (['10 MB document', '1 MB line', 'binary file'] as const)[this.bigDocs++ % 3];
        const text =
          which === '10 MB document'
            ? 'def f(x):\n    return x + 1\n'.repeat(Math.ceil((10 << 20) / 28))
            : which === '1 MB line'
              ? `x = "${'a'.repeat(1 << 20)}"`
              : r.bytes(r.int(1, 256 << 10)).toString('latin1');
        const uri = this.openDoc(out, text);
        const lines = text.split('\n').length;
        for (const line of [0, lines - 1, r.int(0, lines - 1)]) {
          // At the start, inside, or at the end of the line (after a 1 MB line's megabyte).
          const character = r.pick([0, r.int(1, 2000), (text.split('\n')[line] ?? '').length]);
          out.push(
            this.request('textDocument/inlineCompletion', {
              textDocument: { uri },
              position: { line, character },
              context: { triggerKind: 2 },
            }),
          );
        }
        return `${which} and completions in it`;
      }
      case 'invalid-utf8': {
        // Bytes that are not UTF-8 inside a JSON string (the decoder's problem) and lone
        // surrogates written as JSON escapes (valid JSON, not valid Unicode: the tokenizer's).
        const uri = `${FUZZ_URI_PREFIX}utf8-${this.nextId++}.py`;
        const bad = Buffer.from([0xff, 0xc3, 0x28, 0xe2, 0x82, 0xed, 0xa0, 0x80, 0xf8, 0x88]);
        const text = Buffer.concat([
          Buffer.from('x = "'),
          bad,
          Buffer.from('"\\ud800\\udfff\\udc00\\n'),
        ]);
        const body = Buffer.concat([
          Buffer.from(
            `{"jsonrpc":"2.0","method":"textDocument/didOpen","params":{"textDocument":{"uri":"${uri}","languageId":"python","version":1,"text":"`,
          ),
          text,
          Buffer.from('"}}}'),
        ]);
        out.push(frame(body));
        this.open.set(uri, 1);
        out.push(
          this.request('textDocument/inlineCompletion', {
            textDocument: { uri },
            position: { line: 0, character: r.int(0, 12) },
            context: { triggerKind: 2 },
          }),
        );
        out.push(this.request('leapfrog/countTokens', { text: '\ud800 \udfff' }));
        return 'invalid UTF-8 and lone surrogates in a document';
      }
      case 'edits': {
        const docs = [1, 2, 3].map(() => this.openDoc(out, 'a = 1\nb = 2\n'));
        const n = r.int(200, 3000);
        for (let i = 0; i < n; i++) out.push(this.edit(r.pick(docs)));
        for (const uri of docs) {
          out.push(
            this.request('textDocument/inlineCompletion', {
              textDocument: { uri },
              position: { line: r.int(0, 3), character: r.int(0, 5) },
              context: { triggerKind: 2 },
            }),
          );
        }
        return `${n} interleaved incremental edits on 3 documents`;
      }
      case 'unknown-documents': {
        const uris = [
          'file:///never/opened.py',
          '',
          'not a uri',
          'file://%zz/%',
          `untitled:${'x'.repeat(r.int(1, 20000))}`,
          ...this.open.keys(),
        ];
        const uri = r.pick(uris);
        if (this.open.has(uri)) {
          out.push(this.notify('textDocument/didClose', { textDocument: { uri } }));
          this.open.delete(uri);
        }
        out.push(
          this.request('textDocument/inlineCompletion', {
            textDocument: { uri },
            position: { line: 0, character: 0 },
          }),
        );
        out.push(
          this.notify('textDocument/didChange', {
            textDocument: { uri, version: 2 },
            contentChanges: [{ text: 'y' }],
          }),
        );
        out.push(this.notify('textDocument/didClose', { textDocument: { uri } }));
        return `requests for an unknown or closed document (${uri.slice(0, 40)})`;
      }
      case 'cancel': {
        const n = r.int(1, 20);
        for (let i = 0; i < n; i++) {
          const id = r.pick<unknown>([r.int(-5, 1e6), 'nope', null, 1.5, {}, [], this.nextId - 1]);
          out.push(this.notify('$/cancelRequest', { id }));
        }
        return `${n} cancels of unknown ids`;
      }
      case 'huge-message': {
        const mb = r.int(2, 5);
        const big = 'z'.repeat(mb << 20);
        const shape = r.pick(['document', 'unknown method', 'chat', 'deep nesting'] as const);
        if (shape === 'document') this.openDoc(out, big);
        else if (shape === 'unknown method') out.push(this.request('leapfrog/fuzz', { big }));
        else if (shape === 'chat')
          out.push(this.request('leapfrog/countTokens', { text: big.slice(0, 1 << 20) }));
        else
          out.push(
            frame(
              `{"jsonrpc":"2.0","id":${this.nextId++},"method":"leapfrog/status","params":${'['.repeat(100000)}${']'.repeat(100000)}}`,
            ),
          );
        return `a huge message (${shape}, ~${mb} MB)`;
      }
      case 'framing':
        return this.framing(out);
    }
  }

  /** Broken framing: after these bytes the stream may be out of step for good. */
  private framing(out: Buffer[], which?: FramingVariant): string {
    const r = this.rng;
    const body = JSON.stringify({ jsonrpc: '2.0', id: this.nextId++, method: 'leapfrog/status' });
    const n = Buffer.byteLength(body);
    // In the order of FRAMING_VARIANTS.
    const variants: [FramingVariant, string][] = [
      ['no Content-Length', `Content-Type: application/vscode-jsonrpc\r\n\r\n${body}`],
      ['negative Content-Length', `Content-Length: -${r.int(1, 1000)}\r\n\r\n${body}`],
      ['huge Content-Length', `Content-Length: ${r.pick([2 ** 31, 1e12, 2 ** 53])}\r\n\r\n${body}`],
      ['short Content-Length', `Content-Length: ${r.int(1, n - 1)}\r\n\r\n${body}`],
      ['long Content-Length', `Content-Length: ${n + r.int(1, 50)}\r\n\r\n${body}`],
      [
        'Content-Length not a number',
        `Content-Length: ${r.pick(['abc', '', '0x10', '1e3', 'NaN'])}\r\n\r\n${body}`,
      ],
      ['header without a colon', `Content-Length ${n}\r\n\r\n${body}`],
      ['missing \\r\\n\\r\\n', `Content-Length: ${n}\r\n${body}`],
      ['bare \\n line ends', `Content-Length: ${n}\n\n${body}`],
      ['raw binary', r.bytes(r.int(1, 4096)).toString('latin1')],
    ];
    const [label, text] = which ? variants[FRAMING_VARIANTS.indexOf(which)] : r.pick(variants);
    out.push(Buffer.from(text, 'latin1'));
    return label;
  }

  // ------------------------------------------------------------------ pieces

  private request(method: string, params: unknown): Buffer {
    return message({ id: this.nextId++, method, params });
  }

  private notify(method: string, params: unknown): Buffer {
    return message({ method, params });
  }

  private call(method: string, params: unknown): Buffer {
    return this.rng.chance(0.7) ? this.request(method, params) : this.notify(method, params);
  }

  private openDoc(out: Buffer[], text: string): string {
    const uri = `${FUZZ_URI_PREFIX}doc-${this.nextId++}.py`;
    out.push(
      this.notify('textDocument/didOpen', {
        textDocument: { uri, languageId: 'python', version: 1, text },
      }),
    );
    this.open.set(uri, 1);
    return uri;
  }

  private edit(uri: string): Buffer {
    const r = this.rng;
    const version = (this.open.get(uri) ?? 1) + 1;
    this.open.set(uri, version);
    const pos = () => ({
      line: r.chance(0.8) ? r.int(0, 6) : this.badNumber(),
      character: r.chance(0.8) ? r.int(0, 12) : this.badNumber(),
    });
    const start = pos();
    const end = r.chance(0.7) ? start : pos(); // end before start now and then
    const text = r.pick([
      '',
      'x',
      '\n',
      'def g():\n    pass\n',
      '\t',
      '😀',
      '\r\n',
      'é'.repeat(r.int(1, 40)),
    ]);
    const change = r.chance(0.05) ? { text } : { range: { start, end }, text };
    return this.notify('textDocument/didChange', {
      textDocument: { uri, version: r.chance(0.9) ? version : this.badNumber() },
      contentChanges: r.chance(0.9) ? [change] : [change, change, change],
    });
  }

  /** Past the end, negative, fractional, out of int range. */
  private badNumber(): number {
    return this.rng.pick([
      -1,
      -2147483649,
      0.5,
      1.999,
      1e9,
      2 ** 31,
      2 ** 53,
      1e308,
      -1e308,
      7,
      1000000,
    ]);
  }

  private hostileValue(): unknown {
    const r = this.rng;
    return r.pick<() => unknown>([
      () => null,
      () => true,
      () => 0,
      () => -1,
      () => 1.5,
      () => 1e308,
      () => -2147483649,
      () => '',
      () => 'x',
      () => '\u0000\ud800',
      () => 'NaN',
      () => 'y'.repeat(r.int(1000, 100000)),
      () => [],
      () => [1, 'a', null, {}],
      () => ({}),
      () => ({ line: 'a', character: {} }),
      () => JSON.parse('['.repeat(500) + ']'.repeat(500)) as unknown,
    ])();
  }

  private notJson(): Buffer {
    const r = this.rng;
    return r.pick<() => Buffer>([
      () => r.bytes(r.int(1, 2000)),
      () => Buffer.from('{"jsonrpc": "2.0", "id": 1, "method": '),
      () => Buffer.from("{'single': 'quotes'}"),
      () => Buffer.from('{"a":1,}'),
      () => Buffer.from('NaN'),
      () => Buffer.from(''),
      () => Buffer.from('\u0000\u0000\u0000'),
      () => Buffer.from('{"jsonrpc":"2.0","id":1,"method":"leapfrog/status"}}}'),
    ])();
  }

  private notJsonRpc(): unknown {
    const r = this.rng;
    return r.pick<() => unknown>([
      () => ({ hello: 'world' }),
      () => 42,
      () => 'string',
      () => null,
      () => [],
      () => [{ jsonrpc: '2.0', id: 1, method: 'leapfrog/status' }], // a batch: LSP has none
      () => ({ jsonrpc: '1.0', id: 1, method: 'leapfrog/status' }),
      () => ({ jsonrpc: '2.0', id: { x: 1 }, method: 'leapfrog/status' }),
      () => ({ jsonrpc: '2.0', id: [1], method: 'leapfrog/status' }),
      () => ({ jsonrpc: '2.0', id: 1, method: 42 }),
      () => ({ jsonrpc: '2.0', id: 1, method: null, params: 'x' }),
      () => ({ jsonrpc: '2.0', id: r.int(1, 1e6), result: { unexpected: true } }), // a response nobody asked for
      () => ({ jsonrpc: '2.0', id: 'probe-9999999', error: { code: 1, message: 'x' } }),
      () => ({ jsonrpc: '2.0', method: 'leapfrog/status', params: 'not an object' }),
      () => ({
        jsonrpc: '2.0',
        id: 1,
        method: '__proto__',
        params: { __proto__: { polluted: 1 } },
      }),
      () => ({ jsonrpc: '2.0', id: 1, method: 'constructor' }),
      () => ({ jsonrpc: '2.0', id: 1, method: 'toString' }),
    ])();
  }

  /** A valid call of a random method with one field (or the whole params) made hostile. */
  private mutatedCall(): [string, unknown] {
    const r = this.rng;
    const [method, template] = r.pick(this.templates());
    if (template === undefined || r.chance(0.15)) return [method, this.hostileValue()];
    const params = structuredClone(template) as Record<string, unknown>;
    const paths = leafPaths(params);
    if (paths.length === 0) return [method, this.hostileValue()];
    const path = r.pick(paths);
    let at: Record<string, unknown> = params;
    for (const key of path.slice(0, -1)) at = at[key] as Record<string, unknown>;
    const last = path[path.length - 1];
    if (r.chance(0.1)) delete at[last];
    else at[last] = this.hostileValue();
    return [method, params];
  }

  private templates(): [string, unknown][] {
    const uri = this.open.keys().next().value ?? `${FUZZ_URI_PREFIX}template.py`;
    const position = { line: 0, character: 1 };
    return [
      [
        'initialize',
        {
          processId: null,
          rootUri: null,
          capabilities: {},
          initializationOptions: { speculation: { mode: 'auto', budget: 16 }, threads: 2 },
        },
      ],
      ['initialized', {}],
      [
        'workspace/didChangeConfiguration',
        {
          settings: {
            leapfrog: {
              speculation: { mode: 'auto', budget: 16 },
              threads: 2,
              completion: { enabled: true, languages: {}, debounceMs: 60, maxTokens: 32 },
            },
          },
        },
      ],
      [
        'textDocument/didOpen',
        {
          textDocument: {
            uri: `${FUZZ_URI_PREFIX}typed-${this.nextId}.py`,
            languageId: 'python',
            version: 1,
            text: 'a = 1\n',
          },
        },
      ],
      [
        'textDocument/didChange',
        {
          textDocument: { uri, version: 99 },
          contentChanges: [{ range: { start: position, end: position }, text: 'b' }],
        },
      ],
      ['textDocument/didClose', { textDocument: { uri } }],
      [
        'textDocument/inlineCompletion',
        { textDocument: { uri }, position, context: { triggerKind: 2 } },
      ],
      ['$/cancelRequest', { id: this.nextId - 1 }],
      ['leapfrog/status', undefined],
      ['leapfrog/chatModel', undefined],
      ['leapfrog/loadModel', { model: '/nonexistent/leapfrog-fuzz.gguf', draft: null }],
      ['leapfrog/models', { folders: ['/nonexistent/leapfrog-fuzz-models'] }],
      ['leapfrog/chat', { conversationId: 'fuzz', message: 'hi', maxTokens: 4 }],
      ['leapfrog/chatCancel', { conversationId: 'fuzz' }],
      ['leapfrog/chatReset', { conversationId: 'fuzz' }],
      [
        'leapfrog/explain',
        {
          conversationId: 'fuzz-x',
          selection: 'x = 1',
          fileName: 'a.py',
          languageId: 'python',
          maxTokens: 4,
        },
      ],
      [
        'leapfrog/chatMessages',
        { requestId: 'fuzz-r', messages: [{ role: 'user', content: 'hi' }], maxTokens: 4 },
      ],
      ['leapfrog/countTokens', { text: 'hello' }],
      [
        'leapfrog/downloadModel',
        {
          downloadId: 'fuzz-d',
          url: 'http://127.0.0.1:9/fuzz.gguf',
          folder: this.scratchFolder,
          fileName: 'fuzz.gguf',
        },
      ],
      ['leapfrog/completionShown', { uri, text: 'x' }],
      ['leapfrog/completionAccepted', { uri, text: 'x' }],
      ['leapfrog/prefetch', { uri, position }],
    ];
  }
}

/** Every path to a leaf (or an empty object/array) in a JSON value. */
function leafPaths(value: unknown, prefix: string[] = []): string[][] {
  if (typeof value !== 'object' || value === null) return [prefix];
  const keys = Object.keys(value);
  if (keys.length === 0) return [prefix];
  const out: string[][] = prefix.length > 0 ? [prefix] : [];
  for (const k of keys)
    out.push(...leafPaths((value as Record<string, unknown>)[k], [...prefix, k]));
  return out;
}
