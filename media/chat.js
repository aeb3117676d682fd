// The chat webview's page. It shows the sanitized HTML the extension sends (rendered there
// with markdown-it, raw HTML off, links only http(s)) and reports clicks; it never renders
// model text itself. Its own state (vscode.setState) lets it paint at once after a reload.
/* global acquireVsCodeApi, document, window */
(function () {
  // acquireVsCodeApi is provided by VS Code inside webviews.
  const vscode = acquireVsCodeApi();
  const messages = /** @type {HTMLElement} */ (document.getElementById('messages'));
  const empty = /** @type {HTMLElement} */ (document.getElementById('empty'));
  const form = /** @type {HTMLFormElement} */ (document.getElementById('composer'));
  const input = /** @type {HTMLTextAreaElement} */ (document.getElementById('input'));
  const send = /** @type {HTMLButtonElement} */ (document.getElementById('send'));
  const stop = /** @type {HTMLButtonElement} */ (document.getElementById('stop'));
  const newChat = /** @type {HTMLButtonElement} */ (document.getElementById('new-chat'));

  /** @type {{turns: Array<{role: string, html: string, note?: string}>, busy: boolean}} */
  let state = vscode.getState() || { turns: [], busy: false };

  function turnElement(turn, index) {
    const el = document.createElement('div');
    el.className = `turn ${turn.role}`;
    el.dataset.index = String(index);
    const who = document.createElement('div');
    who.className = 'who';
    who.textContent = turn.role === 'user' ? 'You' : 'Leapfrog';
    const body = document.createElement('div');
    body.className = 'body';
    // Sanitized by the extension (see extension/chat/render.ts).
    body.innerHTML = turn.html;
    el.append(who, body);
    if (turn.note) {
      const note = document.createElement('div');
      note.className = 'note';
      note.textContent = turn.note;
      el.append(note);
    }
    const last = index === state.turns.length - 1;
    if (state.busy && last && turn.role === 'assistant') {
      el.classList.add('streaming');
      if (!turn.html) body.innerHTML = '<span class="thinking">…</span>';
    }
    return el;
  }

  function nearBottom() {
    return messages.scrollHeight - messages.scrollTop - messages.clientHeight < 40;
  }

  function renderAll() {
    const stick = nearBottom();
    messages.replaceChildren(...state.turns.map(turnElement));
    empty.hidden = state.turns.length > 0;
    send.hidden = state.busy;
    stop.hidden = !state.busy;
    if (stick || state.busy) messages.scrollTop = messages.scrollHeight;
  }

  function renderTurn(index) {
    const old = messages.querySelector(`.turn[data-index="${index}"]`);
    const stick = nearBottom();
    const el = turnElement(state.turns[index], index);
    if (old) old.replaceWith(el);
    else messages.append(el);
    if (stick) messages.scrollTop = messages.scrollHeight;
  }

  window.addEventListener('message', (event) => {
    const m = event.data;
    if (m.type === 'all') {
      state = { turns: m.turns, busy: m.busy };
      renderAll();
    } else if (m.type === 'turn') {
      state.turns[m.index] = m.turn;
      state.busy = m.busy;
      renderTurn(m.index);
    }
    vscode.setState(state);
  });

  function submit() {
    const text = input.value.trim();
    if (!text || state.busy) return;
    vscode.postMessage({ type: 'send', text });
    input.value = '';
  }

  form.addEventListener('submit', (e) => {
    e.preventDefault();
    submit();
  });
  input.addEventListener('keydown', (e) => {
    if (e.key === 'Enter' && !e.shiftKey && !e.isComposing) {
      e.preventDefault();
      submit();
    }
  });
  stop.addEventListener('click', () => vscode.postMessage({ type: 'stop' }));
  newChat.addEventListener('click', () => vscode.postMessage({ type: 'new' }));

  // Copy / Insert on code blocks: the code is read from the rendered <code> element.
  messages.addEventListener('click', (e) => {
    const target = /** @type {HTMLElement} */ (e.target);
    const button = target.closest('button[data-action]');
    if (!button) return;
    const code = button.closest('.code-block')?.querySelector('code')?.textContent ?? '';
    const action = button.getAttribute('data-action');
    vscode.postMessage({ type: action, code });
    if (action === 'copy') {
      button.textContent = 'Copied';
      setTimeout(() => (button.textContent = 'Copy'), 1200);
    }
  });

  renderAll();
  vscode.postMessage({ type: 'ready' });
})();
