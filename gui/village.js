// The village page: a card per agent (status, model, uptime, tokens, cache rate, last tool,
// the context ring, Start and Stop), the groups' batch-start switches, and what one read of
// `/api/village` brings to the status bar, the map and the chat's agent list.

import { rowAlert, run, clearAlert, showError } from '/alerts.js';
import { getJson } from '/api.js';
import { renderChatAgents } from '/chat.js';
import { $, el, fact, fmtDuration, fmtNum, keepFocus, nextId, svg } from '/dom.js';
import { t } from '/i18n.js';
import { latest } from '/latest.js';
import { renderMap, takePositions } from '/map.js';
import { cancel, debounce, refreshVillage } from '/refresh.js';
import { renderStatusBar } from '/statusbar.js';
import { S } from '/store.js';

const STATUSES = ['idle', 'starting', 'running', 'stopping', 'failed'];

const villageRead = latest();
export async function loadVillage() {
  const current = villageRead();
  const started = performance.now();
  try {
    const v = await getJson('/api/village');
    if (!current()) return;
    applyVillage(v, started);
    clearAlert($('global-alert'));
  } catch (e) {
    showError($('global-alert'), e);
  }
}

function fresh(key, started) {
  const at = S.eventAt.get(key);
  return at !== undefined && at > started;
}

export function applyVillage(v, started) {
  S.village = v;
  const next = new Map();
  for (const a of v.agents || []) {
    const old = S.agents.get(a.id);
    if (old && fresh(a.id + ':status', started)) a.status = old.status;
    if (old && fresh(a.id + ':stats', started)) a.stats = old.stats;
    if (old && fresh(a.id + ':tool', started)) a.lastTool = old.lastTool;
    next.set(a.id, a);
    if (!fresh(a.id + ':typing', started)) S.typing.set(a.id, !!a.typing);
  }
  S.agents = next;
  takePositions(v.map?.nodes || [], (key) => fresh(key, started));
  // While a request runs, its budget is read again every 2 s.
  if ((v.roots || []).length) debounce('roots', refreshVillage, 2000);
  else cancel('roots');
  renderStatusBar();
  renderCards();
  renderGroups();
  renderMap();
  renderChatAgents();
}

const cardRefs = new Map();

export function renderCards() {
  const box = $('cards');
  const agents = [...S.agents.values()];
  const ids = agents.map((a) => a.id).join('\n') + '\n' + S.gen;
  if (box.dataset.ids !== ids) {
    cardRefs.clear();
    keepFocus(box, () => box.replaceChildren(...agents.map(buildCard)));
    box.dataset.ids = ids;
  }
  for (const a of agents) updateCard(a.id);
  $('village-empty').hidden = agents.length > 0;
}

function buildCard(a) {
  const hid = nextId('card-h');
  const ring = svg('svg', { class: 'ring', viewBox: '0 0 36 36', width: 44, height: 44, role: 'img', focusable: 'false' });
  const fg = svg('circle', { class: 'ring-fg', cx: 18, cy: 18, r: 15.9155, 'stroke-dasharray': '0 100', transform: 'rotate(-90 18 18)' });
  const label = svg('text', { class: 'ring-text', x: 18, y: 18, 'text-anchor': 'middle', 'dominant-baseline': 'central' });
  ring.append(svg('circle', { class: 'ring-bg', cx: 18, cy: 18, r: 15.9155 }), fg, label);
  const dl = el('dl', { class: 'facts' });
  const r = { ring, fg, label };
  r.id = fact(dl, t('card.id'));
  r.id.textContent = a.id;
  r.status = fact(dl, t('card.status'));
  r.model = fact(dl, t('card.model'));
  r.uptime = fact(dl, t('card.uptime'));
  r.tokens = fact(dl, t('card.tokens'));
  r.cache = fact(dl, t('card.cacheRate'));
  r.tool = fact(dl, t('card.lastTool'));
  r.start = el('button', { type: 'button', class: 'primary', 'data-fk': 'start:' + a.id, text: t('card.start') });
  r.stop = el('button', { type: 'button', 'data-fk': 'stop:' + a.id, text: t('card.stop') });
  r.alert = rowAlert('card:' + a.id);
  r.start.addEventListener('click', () => startStop(a.id, 'startAgent', r.alert));
  r.stop.addEventListener('click', () => startStop(a.id, 'stopAgent', r.alert));
  r.name = el('h2', { id: hid, text: a.name || a.id });
  const chat = el('a', { href: '#chat/' + encodeURIComponent(a.id), class: 'button-link', 'data-fk': 'chat:' + a.id, text: t('card.chat') });
  const card = el('article', { class: 'card', 'aria-labelledby': hid },
    el('div', { class: 'card-head' }, r.name, ring), dl,
    el('div', { class: 'actions' }, r.start, r.stop, chat), r.alert);
  r.card = card;
  cardRefs.set(a.id, r);
  return card;
}

async function startStop(id, type, alertBox) {
  await run(alertBox, type, { agentId: id });
}

function cachePct(st) {
  if (!st) return null;
  if (st.promptTokens > 0 && typeof st.cachedTokens === 'number') return Math.round((st.cachedTokens / st.promptTokens) * 100);
  if (typeof st.cacheRate === 'number') return Math.round(st.cacheRate <= 1 ? st.cacheRate * 100 : st.cacheRate);
  return null;
}

export function updateCard(id) {
  const r = cardRefs.get(id);
  const a = S.agents.get(id);
  if (!r || !a) return;
  const st = a.stats || {};
  const status = String(a.status || '');
  const known = STATUSES.includes(status);
  r.name.textContent = a.name || a.id;
  r.status.replaceChildren(el('span', { class: 'status status-' + (known ? status : 'other'), text: known ? t('status.' + status) : status }));
  if (S.typing.get(id)) r.status.append(' ', el('span', { class: 'typing-mini', text: t('chat.typing') }));
  r.model.textContent = a.model || a.templateId || '-';
  r.uptime.textContent = fmtDuration(st.uptimeSecs);
  r.tokens.textContent = fmtNum(st.totalTokens);
  const c = cachePct(st);
  r.cache.textContent = c == null ? '-' : c + '%';
  r.tool.textContent = a.lastTool ? t(a.lastTool.ok ? 'card.toolOk' : 'card.toolFailed', { tool: a.lastTool.tool }) : t('card.none');
  const limit = st.contextLimit;
  const used = st.lastPromptTokens;
  if (limit > 0 && typeof used === 'number') {
    const pct = Math.min(100, Math.round((used / limit) * 100));
    r.fg.setAttribute('stroke-dasharray', pct + ' 100');
    r.label.textContent = String(pct);
    r.ring.setAttribute('aria-label', t('card.ring', { n: pct }));
    r.ring.setAttribute('class', 'ring' + (pct >= 80 ? ' ring-high' : ''));
  } else {
    r.fg.setAttribute('stroke-dasharray', '0 100');
    r.label.textContent = '-';
    r.ring.setAttribute('aria-label', t('card.ringUnknown'));
  }
  r.start.disabled = !(status === 'idle' || status === 'failed');
  r.stop.disabled = status !== 'running';
}

export function renderGroups() {
  const groups = S.village?.groups || [];
  const box = $('group-list');
  $('groups').hidden = groups.length === 0;
  keepFocus(box, () => box.replaceChildren(...groups.map((g) => {
    const input = el('input', { type: 'checkbox', 'data-fk': 'group:' + g.id });
    input.checked = !!g.batchStart;
    const alertBox = rowAlert('group:' + g.id);
    input.addEventListener('change', async () => {
      const ok = await run(alertBox, 'setGroupBatchStart', { groupId: g.id, enabled: input.checked });
      if (!ok) input.checked = !input.checked;
    });
    return el('div', { class: 'group' }, el('label', { class: 'check' }, input, ' ', el('span', { text: g.name || g.id })), alertBox);
  })));
}
