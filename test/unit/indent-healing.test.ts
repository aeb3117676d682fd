import { strict as assert } from 'node:assert';
import { IndentHealer, indentToHeal } from '../../engine/completion/indent-healing';

describe('indent healing', () => {
  it('heals only a line prefix made of whitespace', () => {
    assert.equal(indentToHeal('    '), '    ');
    assert.equal(indentToHeal('\t'), '\t');
    assert.equal(indentToHeal('    x = '), '');
    assert.equal(indentToHeal(''), '');
  });

  it('strips the typed indentation from output that starts with it', () => {
    const h = new IndentHealer('    ');
    assert.equal(h.push('  '), undefined);
    assert.equal(h.push('  return'), 'return');
    assert.equal(h.push(' n'), 'return n');
    assert.equal(h.mismatch, false);
  });

  it('flags output that indents differently', () => {
    const h = new IndentHealer('    ');
    assert.equal(h.push('return'), undefined);
    assert.equal(h.mismatch, true);
  });

  it('passes everything through when there is nothing to heal', () => {
    const h = new IndentHealer('');
    assert.equal(h.push('abc'), 'abc');
  });
});
