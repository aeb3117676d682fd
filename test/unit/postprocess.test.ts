import { strict as assert } from 'node:assert';
import {
  cutSelfRepeat,
  postprocess,
  type CompletionContext,
} from '../../engine/completion/postprocess';
import { StreamStopRules } from '../../engine/completion/stop-rules';

function ctx(over: Partial<CompletionContext>): CompletionContext {
  return {
    prefix: '',
    linePrefix: '',
    lineSuffix: '',
    linesBelow: [],
    specialTexts: ['<|endoftext|>', '<|file_sep|>'],
    ...over,
  };
}

describe('post-processing', () => {
  it('is single-line when text stands right of the cursor', () => {
    assert.equal(
      postprocess('a, b)\nfoo()', ctx({ prefix: 'f(', linePrefix: 'f(', lineSuffix: ')' })),
      'a, b',
    );
  });

  it('drops a tail that repeats the text right of the cursor', () => {
    assert.equal(
      postprocess('"hi");', ctx({ prefix: 'print(', linePrefix: 'print(', lineSuffix: ');' })),
      '"hi"',
    );
    assert.equal(postprocess('x = b', ctx({ linePrefix: '', lineSuffix: 'b;' })), 'x = b');
  });

  it('ends multi-line output where indentation leaves the block', () => {
    const out = postprocess(
      '    return a + b\n\ndef other():\n    pass',
      ctx({ prefix: 'def add(a, b):\n', linePrefix: '' }),
    );
    assert.equal(out, '    return a + b');
  });

  it('keeps the closing line of a block the completion opened', () => {
    const out = postprocess(
      '\n  return 1;\n}\n\nfunction g() {',
      ctx({ prefix: 'function f() {', linePrefix: 'function f() {' }),
    );
    assert.equal(out, '\n  return 1;\n}');
  });

  it('drops output that repeats the lines below', () => {
    const out = postprocess(
      'x = 1\ny = 2\nz = 3',
      ctx({ linePrefix: '', linesBelow: ['', 'y = 2', 'z = 3'] }),
    );
    assert.equal(out, 'x = 1');
    assert.equal(
      postprocess('return x', ctx({ linePrefix: '    ', linesBelow: ['    return x'] })),
      '',
    );
  });

  it('strips leaked special tokens', () => {
    assert.equal(postprocess('foo()<|file_sep|>bar.py\nimport os', ctx({})), 'foo()');
    assert.equal(postprocess('<|endoftext|>', ctx({})), '');
  });

  it('cuts at a closing bracket that closes nothing', () => {
    assert.equal(postprocess('a))', ctx({ prefix: 'f(', linePrefix: 'f(' })), 'a)');
    assert.equal(postprocess('x]', ctx({ prefix: 'f(', linePrefix: 'f(' })), 'x');
    assert.equal(postprocess('")"', ctx({ prefix: 'f(', linePrefix: 'f(' })), '")"');
  });

  it('does not leave brackets it opened unclosed across lines', () => {
    const out = postprocess('if (x) {\n  a();\n  b();', ctx({ linePrefix: '' }));
    assert.equal(out, 'if (x) {');
  });

  it('shows nothing that is only whitespace or already there', () => {
    assert.equal(postprocess('   \n  ', ctx({})), '');
    assert.equal(postprocess('bar', ctx({ linePrefix: 'foo', lineSuffix: 'bar' })), '');
    assert.equal(postprocess('x  \n', ctx({})), 'x');
  });
});

describe('streaming stop rules', () => {
  it('stops at the first newline in single-line mode', () => {
    const r = new StreamStopRules(ctx({ lineSuffix: ')' }), { timeBudgetMs: 0, maxLines: 10 }, 0);
    assert.equal(r.shouldStop('abc', 0), false);
    assert.equal(r.shouldStop('abc\n', 0), true);
  });

  it('stops when the block ends, at a special token, and on the time budget after line one', () => {
    const r = new StreamStopRules(
      ctx({ linePrefix: '    ' }),
      { timeBudgetMs: 100, maxLines: 10 },
      0,
    );
    assert.equal(r.shouldStop('return 1', 500), false); // the first line is never cut short
    assert.equal(r.shouldStop('return 1\n', 50), false);
    assert.equal(r.shouldStop('return 1\n', 150), true);
    assert.equal(r.shouldStop('a\n    b\nc\n', 10), true);
    assert.equal(r.shouldStop('a<|endoftext|>', 10), true);
  });
});

describe('cutSelfRepeat', () => {
  it('ends a suggestion before a line repeats an earlier one', () => {
    const looped =
      'lines = []\n    for line in f:\n        lines.append(line)\n    lines.append(line)\n\n    lines.append(line)\n';
    assert.equal(
      cutSelfRepeat(looped),
      'lines = []\n    for line in f:\n        lines.append(line)\n    lines.append(line)\n',
    );
  });
  it('keeps repeated blank lines and lone brackets', () => {
    const code = 'if a:\n    f(\n    )\n\nif b:\n    g(\n    )\n';
    assert.equal(cutSelfRepeat(code), code);
  });
});
