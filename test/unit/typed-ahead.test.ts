import { strict as assert } from 'node:assert';
import { TypedAheadCache } from '../../engine/completion/typed-ahead';

describe('typed-ahead reuse', () => {
  it('answers from the last suggestion while the user types it', () => {
    const c = new TypedAheadCache();
    c.remember('u', 'def f(', ')\n', 'a, b');
    assert.equal(c.lookup('u', 'def f(a', ')\n'), ', b');
    assert.equal(c.lookup('u', 'def f(a, ', ')\n'), 'b');
    assert.equal(c.lookup('u', 'def f(', ')\n'), 'a, b');
  });

  it('does not apply when the typed text differs, the suffix changed or the suggestion is used up', () => {
    const c = new TypedAheadCache();
    c.remember('u', 'x = ', '', 'foo');
    assert.equal(c.lookup('u', 'x = b', ''), undefined);
    assert.equal(c.lookup('u', 'x = f', '\nmore'), undefined);
    assert.equal(c.lookup('u', 'x = foo', ''), undefined);
    assert.equal(c.lookup('other', 'x = f', ''), undefined);
    c.forget('u');
    assert.equal(c.lookup('u', 'x = f', ''), undefined);
  });

  it('keeps the suggestion computed ahead for after an accept beside the one shown', () => {
    const c = new TypedAheadCache();
    c.remember('u', 'x = ', '\n', 'foo(1)');
    c.remember('u', 'x = foo(1)', '\n', '\ny = 2');
    assert.equal(c.lookup('u', 'x = fo', '\n'), 'o(1)', 'typing into the shown one');
    assert.equal(c.lookup('u', 'x = foo(1)', '\n'), '\ny = 2', 'accepted: the next one');
    c.remember('u', 'x = foo(1)', '\n', ''); // nothing there after all
    assert.equal(c.lookup('u', 'x = foo(1)', '\n'), undefined);
    assert.equal(c.lookup('u', 'x = f', '\n'), 'oo(1)');
  });
});
