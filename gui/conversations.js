// The Conversations page, loaded when first opened: every session (Open, View, Export,
// Delete after a dialog), the one viewed with "Fork before this" under each user message.

import { rowAlert, run, clearAlert, showError } from '/alerts.js';
import { getJson } from '/api.js';
import { $, el, fmtDateTime, keepFocus, nextId } from '/dom.js';
import { t } from '/i18n.js';
import { latest } from '/latest.js';
import { go } from '/router.js';
import { S } from '/store.js';
import { endpoint, endpointName } from '/who.js';

const listRead = latest();
export async function loadConversations() {
  const current = listRead();
  try {
    const c = await getJson('/api/conversations');
    if (!current()) return;
    renderConversations(c);
    clearAlert($('conv-alert'));
  } catch (e) {
    showError($('conv-alert'), e);
  }
  if (S.convViewId) viewConversation(S.convViewId, false);
}

function renderConversations(c) {
  const sessions = c?.sessions || [];
  S.convSessions = sessions;
  $('conv-empty').hidden = sessions.length > 0;
  if (S.convViewId && !sessions.some((s) => s.id === S.convViewId)) {
    S.convViewId = null;
    $('conv-view').hidden = true;
  }
  const list = $('conv-list');
  keepFocus(list, () => list.replaceChildren(...sessions.map((s) => drawSession(s, s.id === c.current))));
}

function sessionTitle(s) { return s.title || t('conv.untitled'); }

function drawSession(s, current) {
  const tid = nextId('conv');
  const alertBox = rowAlert('conv:' + s.id);
  const btn = (label, fk, fn, cls) => el('button', { type: 'button', class: cls, 'data-fk': fk + s.id, 'aria-describedby': tid, text: t(label), onclick: fn });
  const title = el('div', { class: 'row-main', id: tid },
    el('strong', { text: sessionTitle(s) }), ' ',
    el('span', { class: 'hint', text: fmtDateTime(s.createdAtMs) }));
  if (current) title.append(' ', el('span', { class: 'tag', text: t('conv.current') }));
  const open = btn('conv.open', 'o:', async () => {
    const ok = await run(alertBox, 'openConversation', { sessionId: s.id });
    if (ok) { S.chats.clear(); S.locals.clear(); go(S.chatAgent ? '#chat/' + encodeURIComponent(S.chatAgent) : '#chat', true); }
  }, 'primary');
  const view = btn('conv.view', 'v:', () => viewConversation(s.id, true));
  const exp = el('a', { class: 'button-link', href: '/api/conversations/' + encodeURIComponent(s.id) + '/export', download: (s.id || 'conversation') + '.jsonl', 'data-fk': 'x:' + s.id, 'aria-describedby': tid, text: t('conv.export') });
  const del = btn('conv.delete', 'd:', () => askDelete(s, alertBox), 'danger');
  return el('li', { class: 'row' + (current ? ' row-current' : ''), 'aria-current': current ? 'true' : null },
    title, el('div', { class: 'actions' }, open, view, exp, del), alertBox);
}

const viewRead = latest();
async function viewConversation(id, focus) {
  const current = viewRead();
  S.convViewId = id;
  const sec = $('conv-view');
  try {
    const c = await getJson('/api/conversations/' + encodeURIComponent(id));
    if (!current()) return;
    const s = S.convSessions.find((x) => x.id === id);
    $('conv-view-h').textContent = t('conv.viewTitle', { title: s ? sessionTitle(s) : id });
    const list = $('conv-msgs');
    const msgs = c?.messages || [];
    keepFocus(list, () => list.replaceChildren(...(msgs.length ? msgs.map((m) => drawConvMessage(id, m)) : [el('li', { class: 'empty', text: t('conv.noMessages') })])));
    sec.hidden = false;
    clearAlert($('conv-alert'));
    if (focus) { $('conv-view-h').tabIndex = -1; $('conv-view-h').focus(); }
  } catch (e) {
    showError($('conv-alert'), e);
  }
}

function drawConvMessage(sessionId, m) {
  const from = endpoint(m.from);
  const to = endpoint(m.to);
  const li = el('li', { class: 'msg msg-' + (from.kind || 'unknown') },
    el('div', { class: 'meta' }, el('span', { class: 'who', text: endpointName(from) + ' ' + t('who.to', { name: endpointName(to) }) }), ' ',
      el('time', { datetime: new Date(m.tsMs).toISOString(), text: fmtDateTime(m.tsMs) })),
    el('div', { class: 'text', text: m.content || '' }));
  if (from.kind === 'user') {
    const alertBox = rowAlert('fork:' + sessionId + ':' + m.seq);
    const b = el('button', { type: 'button', 'data-fk': 'f:' + m.seq, text: t('conv.fork') });
    b.addEventListener('click', async () => {
      const ok = await run(alertBox, 'forkConversation', { sessionId, atSeq: m.seq }, $('conv-status'), t('conv.forked'));
      if (ok) { S.chats.clear(); S.locals.clear(); loadConversations(); }
    });
    li.append(el('div', { class: 'actions' }, b), alertBox);
  }
  return li;
}

function askDelete(s, alertBox) {
  S.deleteId = s.id;
  S.deleteAlert = alertBox;
  $('delete-title').textContent = sessionTitle(s) + ' (' + fmtDateTime(s.createdAtMs) + ')';
  $('delete-dialog').showModal();
}

export function bindConversations() {
  const dlg = $('delete-dialog');
  $('delete-cancel').addEventListener('click', () => dlg.close());
  $('delete-confirm').addEventListener('click', async () => {
    dlg.close();
    const id = S.deleteId;
    if (!id) return;
    const ok = await run(S.deleteAlert, 'deleteConversation', { sessionId: id }, $('conv-status'), t('conv.deleted'));
    if (ok) loadConversations();
  });
}
