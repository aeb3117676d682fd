import { strict as assert } from 'node:assert';
import { renderChat } from '../../engine/chat/chat-template';
import { StopStrings } from '../../engine/generation/stop-strings';
import { explainMessage } from '../../engine/chat/explain';

const QWEN_TEMPLATE =
  "{% for message in messages %}{{'<|im_start|>' + message['role'] + '\\n' + message['content'] + '<|im_end|>' + '\\n'}}{% endfor %}{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{% endif %}";
const LLAMA3_TEMPLATE =
  "{{ bos_token }}{% for m in messages %}{{ '<|start_header_id|>' + m['role'] + '<|end_header_id|>\\n\\n' + m['content'] | trim + '<|eot_id|>' }}{% endfor %}{% if add_generation_prompt %}{{ '<|start_header_id|>assistant<|end_header_id|>\\n\\n' }}{% endif %}";

const msgs = [
  { role: 'system' as const, content: 'be brief' },
  { role: 'user' as const, content: 'hi' },
];

describe('chat templates', () => {
  it('renders the GGUF template with jinja', () => {
    const r = renderChat(QWEN_TEMPLATE, msgs, { bos: '', eos: '<|endoftext|>' });
    assert.equal(r.template, 'model');
    assert.equal(
      r.text,
      '<|im_start|>system\nbe brief<|im_end|>\n<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\n',
    );
    const l = renderChat(LLAMA3_TEMPLATE, msgs, { bos: '<|begin_of_text|>', eos: '<|eot_id|>' });
    assert.ok(l.text.startsWith('<|begin_of_text|><|start_header_id|>system'));
  });

  it('falls back to ChatML when absent or broken', () => {
    assert.equal(renderChat('', msgs, { bos: '', eos: '' }).template, 'chatml');
    const broken = renderChat('{% for %}', msgs, { bos: '', eos: '' });
    assert.equal(broken.template, 'chatml');
    assert.ok(broken.warning);
  });

  it('holds back a stop string split across pieces', () => {
    const f = new StopStrings(['<|im_end|>']);
    assert.deepEqual(f.push('Hello <|im'), { emit: 'Hello ', stopped: false });
    assert.deepEqual(f.push('_end|> more'), { emit: '', stopped: true });
    const g = new StopStrings(['<|im_end|>']);
    assert.deepEqual(g.push('a <'), { emit: 'a ', stopped: false });
    assert.deepEqual(g.push('b'), { emit: '<b', stopped: false });
    assert.equal(g.flush(), '');
  });

  it('explain carries the selection, file name and language', () => {
    const m = explainMessage({ selection: 'x = 1', fileName: 'a.py', languageId: 'python' });
    assert.ok(m.includes('`a.py` (python)') && m.includes('```python\nx = 1\n```'));
  });
});
