// The chat page: the agent picked, its conversation read and merged with what arrives live
// (a message sent here shows at once and takes the server's id when its copy comes), a
// streamed answer growing in one row, Send, Interrupt, New conversation.

import { clearAlert, run, showError } from '/alerts.js';
import { getJson } from '/api.js';
import { renderChat, updateChatControls } from '/chat-log.js';
import { $, el } from '/dom.js';
import { latest } from '/latest.js';
import { questionModule } from '/lazy.js';
import { go } from '/router.js';
import { S } from '/store.js';
import { endpoint } from '/who.js';

const order = { last: 0 }; // the arrival order of rows and messages
// A client-side row sorts after every message known when it arrived (events carry no time).
export function addLocal(agentId, row) {
  const chat = S.chats.get(agentId);
  let last = null;
  if (chat) for (const m of chat.messages) if (typeof m.tsMs === 'number' && (last === null || m.tsMs > last)) last = m.tsMs;
  row.tsMs = last === null ? Date.now() : last;
  row.ls = ++order.last;
  let list = S.locals.get(agentId);
  if (!list) {
    list = [];
    S.locals.set(agentId, list);
  }
  list.push(row);
  if (list.length > 500) list.splice(0, list.length - 500);
  if (S.page === 'chat' && S.chatAgent === agentId) renderChat();
}

export function renderChatAgents() {
  const sel = $('chat-agent');
  const agents = [...S.agents.values()];
  if (!S.chatAgent && agents.length) S.chatAgent = agents[0].id;
  const sig = agents.map((a) => a.id + '\t' + a.name).join('\n') + S.gen;
  if (sel.dataset.sig !== sig) {
    sel.replaceChildren(...agents.map((a) => el('option', { value: a.id, text: a.name && a.name !== a.id ? a.name + ' (' + a.id + ')' : a.id })));
    sel.dataset.sig = sig;
  }
  if (S.chatAgent) sel.value = S.chatAgent;
  $('nav-chat').setAttribute('href', S.chatAgent ? '#chat/' + encodeURIComponent(S.chatAgent) : '#chat');
  updateChatControls();
}

const chatRead = latest();
export async function loadChat() {
  const id = S.chatAgent;
  if (!id) return;
  const current = chatRead();
  try {
    const c = await getJson('/api/chat/' + encodeURIComponent(id));
    if (!current() || id !== S.chatAgent) return;
    mergeChat(id, c);
    getJson('/api/questions').then((r) => r.questions.length && asks({ list: r.questions }), () => {});
    clearAlert($('chat-alert'));
  } catch (e) {
    showError($('chat-alert'), e);
  }
  renderChat();
}

// Union by id: a message that arrived live while the read was on its way stays.
function mergeChat(id, c) {
  const old = S.chats.get(id);
  const fetched = c?.messages || [];
  if (!old || (old.sessionId != null && old.sessionId !== c.sessionId)) {
    const provisional = old ? old.messages.filter((m) => m.local) : [];
    S.chats.set(id, { sessionId: c.sessionId, messages: fetched.slice() });
    for (const p of provisional) if (!claimProvisional(id, p.content)) S.chats.get(id).messages.push(p);
    return;
  }
  old.sessionId = c.sessionId;
  const have = new Set(old.messages.map((m) => m.id));
  for (const m of fetched) {
    if (have.has(m.id)) continue;
    if (endpoint(m.from).kind === 'user' && claim(old, m)) continue;
    old.messages.push(m);
  }
  old.messages.sort((a, b) => a.tsMs - b.tsMs);
}

// A provisional (just sent) message takes the id of the server's copy, in place. The server
// emits no messageSent for the user's own message: the copy comes with the next read.
function claim(chat, m) {
  const same = (x) => x.local && x.content === m.content;
  const p = chat.messages.find((x) => same(x) && !x.failed) || chat.messages.find(same);
  if (!p) return false;
  p.id = m.id;
  p.local = false;
  p.pending = false;
  p.failed = false;
  p.ver = (p.ver || 0) + 1;
  return true;
}

function claimProvisional(id, content) {
  const chat = S.chats.get(id);
  return chat ? chat.messages.some((m) => !m.local && endpoint(m.from).kind === 'user' && m.content === content) : false;
}

/** A streamed answer's next piece: shown in one growing row until the whole message comes. */
export function onDelta(agentId, text) {
  const list = S.locals.get(agentId) || [];
  const open = list.find((r) => r.kind === 'streaming');
  if (open) {
    open.text += text;
    if (S.page === 'chat' && S.chatAgent === agentId) renderChat();
  } else {
    addLocal(agentId, { kind: 'streaming', text });
  }
}

/** The streamed row of an agent ends (its whole message came, or the turn ended). */
export function endDelta(agentId) {
  const list = S.locals.get(agentId);
  if (!list) return;
  const kept = list.filter((r) => r.kind !== 'streaming');
  if (kept.length !== list.length) {
    S.locals.set(agentId, kept);
    if (S.page === 'chat' && S.chatAgent === agentId) renderChat();
  }
}

export function onMessage(m) {
  const sender = endpoint(m.from);
  if (sender.kind === 'agent') endDelta(sender.id);
  window.__fuseforksLastEventLagMs = Date.now() - m.tsMs;
  window.__lastEventAt = performance.now();
  const from = endpoint(m.from);
  const to = endpoint(m.to);
  const ids = new Set();
  if (from.kind === 'agent') ids.add(from.id);
  if (to.kind === 'agent') ids.add(to.id);
  for (const id of ids) {
    let chat = S.chats.get(id);
    if (!chat) {
      if (id !== S.chatAgent) continue;
      chat = { sessionId: null, messages: [] };
      S.chats.set(id, chat);
    }
    if (chat.messages.some((x) => x.id === m.id)) continue;
    if (from.kind === 'user' && claim(chat, m)) { /* in place */ } else {
      m.ls = ++order.last;
      chat.messages.push(m);
    }
    if (S.page === 'chat' && S.chatAgent === id) renderChat();
  }
}

async function sendChat() {
  const id = S.chatAgent;
  const ta = $('chat-text');
  const text = ta.value;
  if (!id || !text.trim()) return;
  let chat = S.chats.get(id);
  if (!chat) {
    chat = { sessionId: null, messages: [] };
    S.chats.set(id, chat);
  }
  const m = { id: 'local-' + (++order.last), from: 'user', to: 'agent:' + id, content: text, tsMs: Date.now(), local: true, pending: true, ver: 0 };
  chat.messages.push(m);
  ta.value = '';
  S.chatScroll = true;
  renderChat();
  const ok = await run($('chat-alert'), 'sendMessage', { agentId: id, text, dryRun: $('chat-dry-run').checked });
  if (m.pending) {
    m.pending = !ok;
    m.failed = !ok;
    m.ver++;
    if (!ok && !ta.value) ta.value = text;
    renderChat();
  }
}

export function bindChat() {
  $('chat-form').addEventListener('submit', (e) => { e.preventDefault(); sendChat(); });
  $('chat-text').addEventListener('keydown', (e) => {
    if (e.key === 'Enter' && !e.shiftKey && !e.isComposing && e.keyCode !== 229) {
      e.preventDefault();
      sendChat();
    }
  });
  $('chat-interrupt').addEventListener('click', () => run($('chat-alert'), 'interrupt', { agentId: S.chatAgent }));
  $('chat-new').addEventListener('click', async () => {
    const ok = await run($('chat-alert'), 'newConversation');
    if (ok) { S.chats.clear(); S.locals.clear(); loadChat(); }
  });
  $('chat-agent').addEventListener('change', (e) => go('#chat/' + encodeURIComponent(e.target.value), false));
}

// A question a turn waits on (ask_user): question.js, loaded at the first one.
export const asks = (e) => questionModule()
  .then((m) => m.on(e, { addLocal, renderChat }), (x) => showError($('chat-alert'), x));

/** The chat page opened (`#chat/ID` names the agent). */
export function showChat(arg) {
  if (arg && arg !== S.chatAgent) S.chatAgent = arg;
  renderChatAgents();
  renderChat();
  loadChat();
}
