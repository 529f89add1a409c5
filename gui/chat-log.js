// The chat's log (`role="log"`): the messages and the client-side rows (tool calls with their
// details read on the first open, notes, failures, a streamed answer, questions) in time order,
// drawn again only where a row is new or changed; and the typing line under it.

import { showError } from '/alerts.js';
import { getJson } from '/api.js';
import { $, el, fmtTime, nextId } from '/dom.js';
import { t } from '/i18n.js';
import { S } from '/store.js';
import { endpoint, endpointName } from '/who.js';

export function updateChatControls() {
  const id = S.chatAgent;
  const typing = !!(id && S.typing.get(id));
  $('chat-typing').textContent = typing ? t('chat.typing') : '';
  $('chat-interrupt').disabled = !typing;
  const none = S.agents.size === 0;
  $('chat-none').hidden = !none;
  $('chat-form').hidden = none;
}

function chatItems(id) {
  const chat = S.chats.get(id);
  const items = chat ? chat.messages.slice() : [];
  for (const l of S.locals.get(id) || []) items.push(l);
  return items.sort((a, b) => a.tsMs - b.tsMs || (a.ls || 0) - (b.ls || 0));
}

const nodeOf = new WeakMap();

// Keyed by object identity: only new or changed rows touch the DOM (the log region then
// announces only them).
function reconcile(box, items, draw) {
  let ref = box.firstChild;
  for (const it of items) {
    const ver = (it.ver || 0) + ':' + S.gen;
    let n = nodeOf.get(it);
    if (!n || n.fkVer !== ver) {
      const nn = draw(it);
      nn.fkVer = ver;
      if (n && n.parentNode === box) {
        if (ref === n) ref = nn;
        box.replaceChild(nn, n);
      }
      nodeOf.set(it, nn);
      n = nn;
    }
    if (n === ref) ref = ref.nextSibling;
    else box.insertBefore(n, ref);
  }
  while (ref) {
    const next = ref.nextSibling;
    box.removeChild(ref);
    ref = next;
  }
}

function drawChatItem(it) {
  if (it.kind === 'tool') return drawToolRow(it);
  if (it.kind === 'question') return it.draw(it);
  if (it.kind === 'streaming') {
    const name = endpointName({ kind: 'agent', id: S.chatAgent });
    return el('div', { class: 'msg msg-agent', 'aria-busy': 'true' },
      el('div', { class: 'meta' }, el('span', { class: 'who', text: name }), ' ', el('span', { class: 'pending', text: t('chat.writing') })),
      el('div', { class: 'text', text: it.text }));
  }
  if (it.kind === 'interrupted') return el('div', { class: 'note', text: t('chat.interrupted') });
  if (it.kind === 'dryRun') return el('div', { class: 'note', text: t('chat.would', it) });
  if (it.kind === 'failed') {
    const row = el('div', { class: 'note note-error', role: 'alert' }, el('strong', { text: t('chat.failed') }), ' ');
    if (it.code) row.append(el('span', { class: 'code', text: it.code }), ' ');
    row.append(el('span', { text: it.error || '' }));
    if (it.fix) row.append(' ', el('span', { class: 'fix', text: t('err.fix') + ' ' + it.fix }));
    return row;
  }
  const from = endpoint(it.from);
  const to = endpoint(it.to);
  let who = endpointName(from);
  if (to.kind !== 'user' && !(to.kind === 'agent' && to.id === S.chatAgent)) who += ' ' + t('who.to', { name: endpointName(to) });
  const meta = el('div', { class: 'meta' }, el('span', { class: 'who', text: who }), ' ',
    el('time', { datetime: new Date(it.tsMs).toISOString(), text: fmtTime(it.tsMs) }));
  if (it.pending) meta.append(' ', el('span', { class: 'pending', text: t(it.failed ? 'chat.notSent' : 'chat.sending') }));
  return el('div', { class: 'msg msg-' + (from.kind || 'unknown') + (it.failed ? ' msg-failed' : '') },
    meta, el('div', { class: 'text', text: it.content || '' }));
}

function drawToolRow(it) {
  const state = t(it.ok ? 'chat.toolOk' : 'chat.toolFailed');
  const did = nextId('tool');
  const btn = el('button', {
    type: 'button', class: 'tool-btn', 'aria-expanded': it.open ? 'true' : 'false', 'aria-controls': did,
    'aria-label': t('chat.toolDetails', { tool: it.tool, state }), 'data-fk': 'tool:' + it.callId,
  }, el('span', { class: 'tool-label', text: t('chat.tool') }), ' ', el('code', { text: it.tool }), ' ',
  el('span', { class: 'tool-state', text: state }));
  const box = el('div', { id: did, class: 'tool-details', hidden: !it.open });
  it.box = box;
  const row = el('div', { class: 'tool-row ' + (it.ok ? 'tool-ok' : 'tool-failed') }, btn);
  if (it.reason?.text) row.append(' ', el('span', { class: 'reason', text: it.reason.text }));
  row.append(box);
  if (it.open) toolDetails(it);
  btn.addEventListener('click', () => {
    it.open = !it.open;
    btn.setAttribute('aria-expanded', it.open ? 'true' : 'false');
    box.hidden = !it.open;
    if (it.open) {
      if (it.detailErr) it.detailErr = null;
      toolDetails(it);
    }
  });
  return row;
}

function prettyJson(text) {
  const s = text == null ? '' : String(text);
  try {
    const v = JSON.parse(s);
    if (v && typeof v === 'object') return JSON.stringify(v, null, 2);
  } catch { /* not JSON (or cut): shown as it is */ }
  return s;
}

// Fetched on the first open; drawn into the row's current box (a redraw makes a new one).
async function toolDetails(it) {
  if (!it.detail && !it.detailErr && !it.loading) {
    if (!it.callId) it.detailErr = { code: 'GUI_NO_CALL_ID', message: t('chat.noCallId') };
    else {
      it.loading = true;
      it.box.replaceChildren(el('p', { class: 'hint', text: t('chat.loading') }));
      try {
        it.detail = await getJson('/api/tools/' + encodeURIComponent(it.agentId) + '/' + encodeURIComponent(it.callId));
      } catch (e) {
        it.detailErr = e;
      }
      it.loading = false;
    }
  }
  if (it.loading) return;
  const box = it.box;
  if (it.detailErr) {
    const a = el('p', { class: 'alert', role: 'alert' });
    showError(a, it.detailErr);
    box.replaceChildren(a);
    return;
  }
  const d = it.detail || {};
  const fig = (label, text) => {
    const cid = nextId('fig');
    return el('figure', { class: 'tool-fig', 'aria-labelledby': cid }, el('figcaption', { id: cid, text: label }),
      text ? el('pre', { class: 'tool-pre', tabindex: 0, text }) : el('p', { class: 'hint', text: t('chat.emptyResult') }));
  };
  box.replaceChildren(fig(t('chat.args'), prettyJson(d.args)), fig(t('chat.result'), prettyJson(d.result)));
}

export function renderChat() {
  const box = $('chat-log');
  if (box.dataset.agent !== S.chatAgent) {
    box.replaceChildren();
    box.dataset.agent = S.chatAgent || '';
  }
  const nearEnd = box.scrollHeight - box.scrollTop - box.clientHeight < 48;
  const items = chatItems(S.chatAgent);
  reconcile(box, items, drawChatItem);
  if (items.length === 0) box.replaceChildren(el('p', { class: 'empty', text: t('chat.empty') }));
  if (nearEnd || S.chatScroll) box.scrollTop = box.scrollHeight;
  S.chatScroll = false;
  updateChatControls();
}
