// Fuseforks web GUI: one module, no dependencies, no build step.
// Every server-provided string goes through textContent / text nodes, never HTML.
// The API it uses is docs/gui-api.md.

const LANG_KEY = 'fuseforks.lang';
const PAGES = ['village', 'chat', 'conversations', 'approvals', 'servants', 'files', 'stats', 'settings', 'log'];
const STATUSES = ['idle', 'starting', 'running', 'stopping', 'failed'];

const $ = (id) => document.getElementById(id);

// ---------------------------------------------------------------- i18n

let dict = {};
let lang = 'en';

function t(key, vars) {
  let s = Object.prototype.hasOwnProperty.call(dict, key) ? dict[key] : key;
  if (vars) for (const k of Object.keys(vars)) s = s.split('{' + k + '}').join(String(vars[k]));
  return s;
}

// The first load's words; the Servants, Files and Stats pages' words come with their modules
// (`pages-<lang>.json`, merged in once one of them is first opened, and on a language switch).
let pagesWanted = false;
async function loadDict(code, pages = pagesWanted) {
  const name = (p) => '/i18n/' + p + (code === 'ja' ? 'ja' : 'en') + '.json';
  const [d, more] = await Promise.all([getJson(name('')), pages ? getJson(name('pages-')) : {}, code === 'ja' && loadCodes()]);
  return Object.assign(d && typeof d === 'object' ? d : {}, more);
}

// Japanese words of the server's codes (codes-ja.json), loaded once ja is chosen.
let codes = {};
let codesP = null;
const loadCodes = () => codesP || (codesP = getJson('/i18n/codes-ja.json').then((d) => { codes = d || {}; }, () => {}));

let pagesWords = null;
function pageWords() {
  if (!pagesWords) {
    pagesWanted = true;
    pagesWords = loadDict(lang, true).then((d) => { dict = d; applyStatic(); });
  }
  return pagesWords;
}

function storedLang() {
  try {
    const v = localStorage.getItem(LANG_KEY);
    return v === 'ja' || v === 'en' ? v : null;
  } catch {
    return null;
  }
}

function applyStatic() {
  document.documentElement.lang = lang;
  // A word not loaded yet (a later page's) leaves the element's own English as it is.
  const has = (k) => Object.prototype.hasOwnProperty.call(dict, k);
  for (const e of document.querySelectorAll('[data-i18n]')) if (has(e.dataset.i18n)) e.textContent = t(e.dataset.i18n);
  for (const e of document.querySelectorAll('[data-i18n-aria]')) if (has(e.dataset.i18nAria)) e.setAttribute('aria-label', t(e.dataset.i18nAria));
  $('lang').value = lang;
}

async function setLang(code, persist) {
  const d = await loadDict(code);
  dict = d;
  lang = code;
  if (persist) {
    try { localStorage.setItem(LANG_KEY, code); } catch { /* private mode: the switch still works for this page */ }
  }
  applyStatic();
  S.gen++;
  for (const [box, err] of shown) if (box.isConnected) showError(box, err); else shown.delete(box);
  for (const c of marked) if (c.isConnected) markField(c, c.fieldWords); else marked.delete(c);
  renderAll();
  route(false);
}

// ---------------------------------------------------------------- DOM helpers

function el(tag, attrs, ...kids) {
  const e = document.createElement(tag);
  if (attrs) {
    for (const k of Object.keys(attrs)) {
      const v = attrs[k];
      if (v == null || v === false) continue;
      if (k === 'class') e.className = v;
      else if (k === 'text') e.textContent = v;
      else if (k === 'value') e.value = v;
      else if (k.startsWith('on') && typeof v === 'function') e.addEventListener(k.slice(2), v);
      else e.setAttribute(k, v === true ? '' : String(v));
    }
  }
  for (const c of kids) if (c != null && c !== false) e.append(c);
  return e;
}

let uid = 0;
const nextId = (p) => p + '-' + (++uid);

function pad(n, w = 2) { return String(n).padStart(w, '0'); }

function fmtDateTime(ms, seconds) {
  const d = new Date(ms);
  if (Number.isNaN(d.getTime())) return '';
  const s = d.getFullYear() + '-' + pad(d.getMonth() + 1) + '-' + pad(d.getDate()) + ' ' + pad(d.getHours()) + ':' + pad(d.getMinutes());
  return seconds ? s + ':' + pad(d.getSeconds()) : s;
}

function fmtTime(ms) {
  const d = new Date(ms);
  return Number.isNaN(d.getTime()) ? '' : pad(d.getHours()) + ':' + pad(d.getMinutes());
}

function fmtNum(n) {
  return typeof n === 'number' && Number.isFinite(n) ? new Intl.NumberFormat(lang).format(n) : '-';
}

function fmtDuration(secs) {
  if (typeof secs !== 'number' || !Number.isFinite(secs)) return '-';
  const h = Math.floor(secs / 3600);
  const m = Math.floor((secs % 3600) / 60);
  const s = Math.floor(secs % 60);
  if (h > 0) return t('dur.hm', { h, m: pad(m) });
  if (m > 0) return t('dur.ms', { m, s: pad(s) });
  return t('dur.s', { s });
}

// Keeps the focused control focused across a rebuild of a list (keys in data-fk).
function keepFocus(container, rebuild) {
  const a = document.activeElement;
  const key = a && container.contains(a) ? a.dataset.fk : null;
  rebuild();
  if (key) {
    for (const e of container.querySelectorAll('[data-fk]')) {
      if (e.dataset.fk === key) { e.focus(); break; }
    }
  }
}

// ---------------------------------------------------------------- API

class ApiError extends Error {
  constructor(code, message, fix, field, server) {
    super(message);
    this.code = code;
    this.fix = fix;
    this.field = field; // JSON path of the refused value (docs/gui-api.md)
    this.server = server;
  }
}

async function decode(r) {
  const text = await r.text();
  let body = null;
  try { body = text ? JSON.parse(text) : null; } catch { body = null; }
  if (!r.ok || (body && body.error)) {
    const e = (body && body.error) || {};
    throw new ApiError(e.code || 'HTTP_' + r.status, e.message || r.statusText || t('err.http'), e.fix, e.field, !!e.code);
  }
  return body;
}

async function send(path, init) {
  let r;
  try {
    r = await fetch(path, init);
  } catch {
    throw new ApiError('GUI_NETWORK', t('err.network'), t('err.networkFix'));
  }
  return decode(r);
}

const getJson = (path) => send(path, { headers: { accept: 'application/json' }, cache: 'no-store' });

function command(type, fields) {
  return send('/api/commands', {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json' },
    body: JSON.stringify(Object.assign({ type }, fields || {})),
  });
}

// A server code's words in ja (its English as a detail), else the error's own.
function errWords(err) {
  const w = lang === 'ja' && err && err.server && codes[err.code];
  return w ? { message: w.message, fix: w.fix, english: [err.message, err.fix].filter(Boolean).join(' ') }
    : { message: (err && err.message) || String(err), fix: err && err.fix };
}

const shown = new Map(); // alert box -> its error (redrawn on a language switch)
function showError(box, err) {
  const code = (err && err.code) || 'GUI_CLIENT';
  const w = errWords(err);
  box.replaceChildren(el('strong', { class: 'code', text: code }), ' ', el('span', { text: w.message }));
  if (w.fix) box.append(' ', el('span', { class: 'fix', text: t('err.fix') + ' ' + w.fix }));
  if (w.english) box.append(el('details', null, el('summary', { text: t('err.english') }), el('span', { lang: 'en', text: w.english })));
  box.hidden = false;
  shown.set(box, err);
  if (box.dataset.ek) rowErrors.set(box.dataset.ek, err);
}

// ---------------------------------------------------------------- field errors
// Every form: a control's own attributes are checked before sending; a server refusal lands at
// the control whose data-field is its `field`. Words beside it (aria-invalid, -describedby).

function fieldProblem(c) {
  const v = c.validity;
  if (!v || v.valid) return null;
  const range = c.min !== '' && c.max !== '' ? t('check.range', { min: c.min, max: c.max }) : null;
  if (v.valueMissing) return t('check.required');
  if (v.badInput) return t('check.number');
  if (v.rangeUnderflow) return range || t('check.min', { min: c.min });
  if (v.rangeOverflow) return range || t('check.max', { max: c.max });
  if (v.stepMismatch) return t('check.step');
  return t('check.format');
}

const marked = new Set(); // controls marked now
function markField(c, words) {
  const text = typeof words === 'function' ? words() : words;
  let note = c.fieldNote;
  const base = c.dataset.describedby ?? (c.dataset.describedby = c.getAttribute('aria-describedby') || '');
  if (!text) {
    if (note) note.remove();
    c.removeAttribute('aria-invalid');
    if (base) c.setAttribute('aria-describedby', base); else c.removeAttribute('aria-describedby');
    marked.delete(c);
    return;
  }
  if (!note) note = c.fieldNote = el('span', { class: 'field-error', id: nextId('fe') });
  note.textContent = text;
  if (!note.isConnected) c.after(note);
  c.setAttribute('aria-invalid', 'true');
  c.setAttribute('aria-describedby', (base + ' ' + note.id).trim());
  c.fieldWords = words;
  marked.add(c);
}

// Marks each bad control of `scope` (or it), focuses the first; true when all hold.
function checkFields(scope, focus = true) {
  const all = scope.matches('input, select, textarea') ? [scope] : scope.querySelectorAll('input, select, textarea');
  let first = null;
  for (const c of all) {
    const bad = fieldProblem(c);
    markField(c, bad && (() => fieldProblem(c)));
    if (bad && !first) first = c;
  }
  if (first && focus) first.focus();
  return !first;
}

// A refusal's words at the control of its `field` (or of the nearest path above it).
function placeFieldError(scope, err) {
  let c = null;
  for (let p = scope && err && err.field; p && !c;) {
    c = scope.querySelector('[data-field="' + CSS.escape(p) + '"]');
    const up = p.replace(/(\.[^.[\]]+|\[\d+\])$/, '');
    p = up === p ? '' : up;
  }
  if (!c) return;
  markField(c, () => errWords(err).message);
  c.focus();
}

document.addEventListener('input', (e) => {
  if (marked.has(e.target)) markField(e.target, fieldProblem(e.target) && (() => fieldProblem(e.target)));
});

function clearAlert(box) {
  shown.delete(box);
  if (box.dataset.ek) rowErrors.delete(box.dataset.ek);
  if (!box.hidden || box.firstChild) { box.replaceChildren(); box.hidden = true; }
}

// The alert of a row of a list that is drawn again on live updates: its error survives.
const rowErrors = new Map();
function rowAlert(key) {
  const box = el('p', { class: 'alert', role: 'alert', hidden: true, 'data-ek': key });
  const err = rowErrors.get(key);
  if (err) showError(box, err);
  return box;
}

const flashTimers = new WeakMap();
function flash(box, text) {
  box.textContent = text;
  clearTimeout(flashTimers.get(box));
  flashTimers.set(box, setTimeout(() => { box.textContent = ''; }, 4000));
}

// Runs one command; shows its error in `alertBox` (and returns null) or clears it. A `scope`'s
// fields are checked first (nothing sent while one is wrong); a refused field is marked there.
async function run(alertBox, type, fields, statusBox, okText, scope) {
  if (scope && !checkFields(scope)) return null;
  try {
    const r = await command(type, fields);
    if (alertBox) clearAlert(alertBox);
    if (statusBox && okText) flash(statusBox, okText);
    refreshSoon();
    return r || { ok: true };
  } catch (e) {
    showError(alertBox || $('global-alert'), e);
    placeFieldError(scope, e);
    return null;
  }
}

// ---------------------------------------------------------------- state

const S = {
  village: null,
  agents: new Map(), // id -> agent (as /api/village, patched by events)
  typing: new Map(), // id -> bool
  eventAt: new Map(), // "id:field" -> performance.now() of the last event that set it
  chats: new Map(), // id -> {sessionId, messages}
  locals: new Map(), // id -> tool rows, notes, failures (client-side rows of the chat)
  chatAgent: null,
  page: 'village',
  gen: 0, // bumps on a language change: every row is drawn again
  planEdits: new Map(),
  convViewId: null,
  convSessions: [],
  deleteId: null,
  live: 'off',
};

const timers = {};
function debounce(name, fn, ms = 100) {
  clearTimeout(timers[name]);
  timers[name] = setTimeout(fn, ms);
}

const refreshVillage = () => debounce('village', loadVillage);
function refreshPage(name) {
  if (S.page !== name) return;
  if (name === 'approvals') debounce('approvals', loadApprovals);
  if (name === 'conversations') debounce('conversations', loadConversations);
  if (name === 'chat') debounce('chat', loadChat);
}
function refreshSoon() {
  refreshVillage();
  refreshPage('approvals');
  refreshPage('conversations');
}
function refreshAll() {
  refreshVillage();
  refreshPage(S.page);
  if (S.page === 'settings') loadSettings();
}

function agentName(id) {
  const a = S.agents.get(id);
  return a && a.name ? a.name : id;
}

// Endpoints come as "user" / "agent:ID" strings (reads) or {kind:"agent", id} objects (events).
function endpoint(e) {
  if (typeof e === 'string') {
    const i = e.indexOf(':');
    const kind = i < 0 ? e : e.slice(0, i);
    const rest = i < 0 ? '' : e.slice(i + 1);
    if (kind === 'agent') return { kind, id: rest };
    if (kind === 'external') return { kind, client: rest };
    return { kind };
  }
  if (e && typeof e === 'object') {
    const kind = e.kind || e.type;
    return { kind, id: e.id, client: e.client };
  }
  return { kind: 'unknown' };
}

function endpointName(ep) {
  if (ep.kind === 'user') return t('who.you');
  if (ep.kind === 'system') return t('who.system');
  if (ep.kind === 'agent') return agentName(ep.id);
  if (ep.kind === 'external') return t('who.external', { name: ep.client || '?' });
  return '?';
}

// ---------------------------------------------------------------- village

let villageSeq = 0;
async function loadVillage() {
  const seq = ++villageSeq;
  const started = performance.now();
  try {
    const v = await getJson('/api/village');
    if (seq !== villageSeq) return;
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

function applyVillage(v, started) {
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
  for (const n of (v.map && v.map.nodes) || []) {
    // A place moved here and not saved yet (or being saved) is newer than any answer.
    const mine = (mapDrag && mapDrag.id === n.id) || mapMoved.has(n.id) || mapSaving.has(n.id);
    if (!mine && !(mapPos.has(n.id) && fresh('pos:' + n.id, started))) mapPos.set(n.id, { x: n.x, y: n.y });
  }
  clearTimeout(timers.roots);
  if ((v.roots || []).length) timers.roots = setTimeout(refreshVillage, 2000);
  renderStatusBar();
  renderCards();
  renderGroups();
  renderMap();
  renderChatAgents();
}

function renderBadge() {
  const n = (S.village && S.village.pendingCount) || 0;
  const b = $('approvals-badge');
  b.textContent = String(n);
  b.setAttribute('aria-label', t('nav.pending', { n }));
  b.hidden = n === 0;
}

const cardRefs = new Map();

function renderCards() {
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

const SVG = 'http://www.w3.org/2000/svg';
function svg(tag, attrs) {
  const e = document.createElementNS(SVG, tag);
  for (const k of Object.keys(attrs)) e.setAttribute(k, String(attrs[k]));
  return e;
}

function fact(dl, label) {
  const dd = el('dd');
  dl.append(el('dt', { text: label }), dd);
  return dd;
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

function updateCard(id) {
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

function renderGroups() {
  const groups = (S.village && S.village.groups) || [];
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

// ---------------------------------------------------------------- connection map

const NODE_R = 22;
const MAP_PAD = 60;
const ARROWS = { ArrowLeft: [-1, 0], ArrowRight: [1, 0], ArrowUp: [0, -1], ArrowDown: [0, 1] };
const mapPos = new Map(); // id -> {x, y} as drawn (the server's, or the user's not yet read back)
const mapRefs = { svg: null, nodes: new Map(), edges: [] };
let mapDrag = null;
const mapMoved = new Set(); // nodes moved here since their last save began

function mapSize() {
  const m = (S.village && S.village.map) || {};
  return [m.width > 0 ? m.width : 800, m.height > 0 ? m.height : 500];
}

function renderMap() {
  const m = (S.village && S.village.map) || {};
  const nodes = m.nodes || [];
  const edges = m.edges || [];
  const [w, h] = mapSize();
  $('map-sec').hidden = nodes.length === 0;
  const sig = [w, h, S.gen, ...nodes.map((n) => n.id + '\t' + n.name + '\t' + n.kind), ...edges.map((e) => e.from + '>' + e.to)].join('\n');
  const box = $('map-box');
  if (box.dataset.sig !== sig) {
    keepFocus(box, () => box.replaceChildren(buildMap(nodes, edges, w, h)));
    box.dataset.sig = sig;
  }
  placeMap();
}

function buildMap(nodes, edges, w, h) {
  const root = svg('svg', { class: 'map', viewBox: [-MAP_PAD, -MAP_PAD, w + 2 * MAP_PAD, h + 2 * MAP_PAD].join(' '), role: 'img', 'aria-label': t('map.title') });
  const title = svg('title', {});
  title.textContent = t('map.title');
  const marker = svg('marker', { id: 'map-arrow', viewBox: '0 0 10 10', refX: 9, refY: 5, markerWidth: 7, markerHeight: 7, orient: 'auto' });
  marker.append(svg('path', { class: 'map-arrowhead', d: 'M0 0L10 5L0 10z' }));
  const defs = svg('defs', {});
  defs.append(marker);
  const lines = svg('g', { class: 'map-edges' });
  const known = new Set(nodes.map((n) => n.id));
  mapRefs.edges = [];
  for (const e of edges) {
    if (!known.has(e.from) || !known.has(e.to) || e.from === e.to) continue;
    const line = svg('line', { class: 'map-edge', 'marker-end': 'url(#map-arrow)' });
    lines.append(line);
    mapRefs.edges.push({ from: e.from, to: e.to, line });
  }
  const group = svg('g', { class: 'map-nodes' });
  mapRefs.nodes.clear();
  for (const n of nodes) {
    const g = buildNode(n, root);
    group.append(g);
    mapRefs.nodes.set(n.id, g);
  }
  root.append(title, defs, lines, group);
  mapRefs.svg = root;
  return root;
}

function buildNode(n, root) {
  const judge = n.kind === 'judge';
  const id = n.id;
  const g = svg('g', {
    class: 'map-node ' + (judge ? 'map-judge' : 'map-servant'), tabindex: 0, role: 'button',
    'aria-label': n.name || id, 'aria-describedby': judge ? 'map-judge map-hint' : 'map-hint', 'data-fk': 'node:' + id,
  });
  g.append(judge
    ? svg('rect', { class: 'map-shape', x: -19, y: -19, width: 38, height: 38, transform: 'rotate(45)' })
    : svg('circle', { class: 'map-shape', r: NODE_R }));
  const label = svg('text', { class: 'map-label', y: NODE_R + 16, 'text-anchor': 'middle' });
  label.textContent = n.name || id;
  g.append(label);
  g.addEventListener('keydown', (e) => {
    const d = ARROWS[e.key];
    if (!d || e.altKey || e.ctrlKey || e.metaKey) return;
    e.preventDefault();
    const step = e.shiftKey ? 50 : 10;
    const p = mapPos.get(id) || { x: 0, y: 0 };
    moveNode(id, p.x + d[0] * step, p.y + d[1] * step);
    // Saved after a pause too: a redraw of the map between key down and key up (a live
    // update) would take the key up, and the move, with it.
    debounce('pos-save:' + id, () => savePos(id), 300);
  });
  g.addEventListener('keyup', (e) => { if (ARROWS[e.key]) savePos(id); });
  const toMap = (e) => {
    const ctm = root.getScreenCTM();
    return ctm ? new DOMPoint(e.clientX, e.clientY).matrixTransform(ctm.inverse()) : null;
  };
  g.addEventListener('pointerdown', (e) => {
    if (e.button !== 0) return;
    const p = toMap(e);
    const at = mapPos.get(id);
    if (!p || !at) return;
    e.preventDefault();
    g.focus();
    mapDrag = { id, pid: e.pointerId, dx: at.x - p.x, dy: at.y - p.y, moved: false };
    g.setPointerCapture(e.pointerId);
    g.classList.add('map-dragging');
  });
  g.addEventListener('pointermove', (e) => {
    if (!mapDrag || mapDrag.id !== id || mapDrag.pid !== e.pointerId) return;
    const p = toMap(e);
    if (!p) return;
    mapDrag.moved = true;
    moveNode(id, p.x + mapDrag.dx, p.y + mapDrag.dy);
  });
  const end = () => {
    if (!mapDrag || mapDrag.id !== id) return;
    const moved = mapDrag.moved;
    mapDrag = null;
    g.classList.remove('map-dragging');
    if (moved) savePos(id);
  };
  for (const ev of ['pointerup', 'pointercancel', 'lostpointercapture']) g.addEventListener(ev, end);
  return g;
}

function moveNode(id, x, y) {
  const [w, h] = mapSize();
  const clamp = (v, hi) => Math.round(Math.min(hi, Math.max(0, v)));
  mapPos.set(id, { x: clamp(x, w), y: clamp(y, h) });
  mapMoved.add(id);
  S.eventAt.set('pos:' + id, performance.now());
  placeMap();
}

function placeMap() {
  for (const [id, g] of mapRefs.nodes) {
    const p = mapPos.get(id);
    if (p) g.setAttribute('transform', 'translate(' + p.x + ' ' + p.y + ')');
  }
  for (const e of mapRefs.edges) {
    const a = mapPos.get(e.from);
    const b = mapPos.get(e.to);
    if (!a || !b) continue;
    const dx = b.x - a.x;
    const dy = b.y - a.y;
    const d = Math.hypot(dx, dy);
    const k = d > 2 * NODE_R + 4 ? 1 : 0;
    const s0 = k * (NODE_R + 2) / (d || 1);
    const s1 = k * (NODE_R + 4) / (d || 1);
    const at = { x1: a.x + dx * s0, y1: a.y + dy * s0, x2: b.x - dx * s1, y2: b.y - dy * s1 };
    if (!k) Object.assign(at, { x2: at.x1, y2: at.y1 });
    for (const key of Object.keys(at)) e.line.setAttribute(key, at[key].toFixed(1));
  }
}

// One save in flight per node; moves made meanwhile are saved after it, the latest only.
const mapSaving = new Map();
async function savePos(id) {
  if (mapSaving.has(id)) { mapSaving.set(id, 'again'); return; }
  mapSaving.set(id, 'busy');
  for (;;) {
    const p = mapPos.get(id);
    if (!p) break;
    mapMoved.delete(id);
    await run($('map-alert'), 'setPosition', { agentId: id, x: p.x, y: p.y });
    S.eventAt.set('pos:' + id, performance.now());
    if (mapSaving.get(id) !== 'again') break;
    mapSaving.set(id, 'busy');
  }
  mapSaving.delete(id);
}

// ---------------------------------------------------------------- status bar

function switchState() {
  const s = S.village && S.village.switch;
  if (!s) return 'running';
  return typeof s === 'string' ? s : s.state || s.to || 'running';
}

function renderStatusBar() {
  const v = S.village;
  renderBadge();
  if (!v) return;
  const door = v.door || {};
  $('sb-door').textContent = door.open ? t('sb.doorOpen', { url: door.url || '' }) : t('sb.doorClosed');
  $('sb-version').textContent = t('sb.version', { v: v.version || '?' });
  const roots = v.roots || [];
  $('sb-budget').textContent = roots.length
    ? roots.map((r) => (r.ceiling == null ? t('sb.budgetNone', { spent: fmtNum(r.spent) })
      : t('sb.budget', { remaining: fmtNum(r.remaining), ceiling: fmtNum(r.ceiling) }))).join('; ')
    : t('sb.noRoot');
  const st = switchState();
  const known = ['running', 'paused', 'aborting', 'halted'].includes(st);
  $('sb-switch-state').textContent = known ? t('switch.' + st) : st;
  $('sb-switch-state').className = 'switch-' + st;
  const mode = String(v.runApproval || 'required').replace(/-/g, '_');
  $('sb-approval').value = mode;
  $('sb-bypass').checked = !!v.planReviewBypass;
}

function renderLive() {
  $('sb-live').textContent = t('live.' + S.live);
  $('sb-live').className = 'sb-item live-' + S.live;
}

function tick() {
  const now = Date.now();
  const c = $('sb-clock');
  c.textContent = fmtDateTime(now, true);
  c.setAttribute('datetime', new Date(now).toISOString());
}

function bindStatusBar() {
  const alertBox = $('sb-alert');
  for (const b of document.querySelectorAll('[data-switch]')) {
    b.addEventListener('click', () => run(alertBox, 'killSwitch', { command: b.dataset.switch }));
  }
  const dlg = $('halt-dialog');
  $('sb-halt').addEventListener('click', () => dlg.showModal());
  $('halt-cancel').addEventListener('click', () => dlg.close());
  $('halt-confirm').addEventListener('click', async () => {
    dlg.close();
    await run(alertBox, 'killSwitch', { command: 'halt' });
  });
  $('sb-approval').addEventListener('change', async (e) => {
    const ok = await run(alertBox, 'setRunApproval', { mode: e.target.value });
    if (!ok) renderStatusBar();
  });
  $('sb-bypass').addEventListener('change', async (e) => {
    const ok = await run(alertBox, 'setPlanReviewBypass', { enabled: e.target.checked });
    if (!ok) renderStatusBar();
  });
}

// ---------------------------------------------------------------- chat

let localSeq = 0;
// A client-side row sorts after every message known when it arrived (events carry no time).
function addLocal(agentId, row) {
  const chat = S.chats.get(agentId);
  let last = null;
  if (chat) for (const m of chat.messages) if (typeof m.tsMs === 'number' && (last === null || m.tsMs > last)) last = m.tsMs;
  row.tsMs = last === null ? Date.now() : last;
  row.ls = ++localSeq;
  let list = S.locals.get(agentId);
  if (!list) S.locals.set(agentId, (list = []));
  list.push(row);
  if (list.length > 500) list.splice(0, list.length - 500);
  if (S.page === 'chat' && S.chatAgent === agentId) renderChat();
}

function renderChatAgents() {
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

function updateChatControls() {
  const id = S.chatAgent;
  const typing = !!(id && S.typing.get(id));
  $('chat-typing').textContent = typing ? t('chat.typing') : '';
  $('chat-interrupt').disabled = !typing;
  const none = S.agents.size === 0;
  $('chat-none').hidden = !none;
  $('chat-form').hidden = none;
}

let chatSeq = 0;
async function loadChat() {
  const id = S.chatAgent;
  if (!id) return;
  const seq = ++chatSeq;
  try {
    const c = await getJson('/api/chat/' + encodeURIComponent(id));
    if (seq !== chatSeq || id !== S.chatAgent) return;
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
  const fetched = (c && c.messages) || [];
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
function onDelta(agentId, text) {
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
function endDelta(agentId) {
  const list = S.locals.get(agentId);
  if (!list) return;
  const kept = list.filter((r) => r.kind !== 'streaming');
  if (kept.length !== list.length) {
    S.locals.set(agentId, kept);
    if (S.page === 'chat' && S.chatAgent === agentId) renderChat();
  }
}

function onMessage(m) {
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
      S.chats.set(id, (chat = { sessionId: null, messages: [] }));
    }
    if (chat.messages.some((x) => x.id === m.id)) continue;
    if (from.kind === 'user' && claim(chat, m)) { /* in place */ } else {
      m.ls = ++localSeq;
      chat.messages.push(m);
    }
    if (S.page === 'chat' && S.chatAgent === id) renderChat();
  }
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
  if (it.reason && it.reason.text) row.append(' ', el('span', { class: 'reason', text: it.reason.text }));
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

function renderChat() {
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

async function sendChat() {
  const id = S.chatAgent;
  const ta = $('chat-text');
  const text = ta.value;
  if (!id || !text.trim()) return;
  let chat = S.chats.get(id);
  if (!chat) S.chats.set(id, (chat = { sessionId: null, messages: [] }));
  const m = { id: 'local-' + (++localSeq), from: 'user', to: 'agent:' + id, content: text, tsMs: Date.now(), local: true, pending: true, ver: 0 };
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

function bindChat() {
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
let asking = null;
const asks = (e) => (asking || (pagesStyle(), asking = pageWords().then(() => import('/question.js'))))
  .then((m) => m.on(e, { el, t, run, agentName, nextId, addLocal, renderChat, S }), (x) => showError($('chat-alert'), x));

// ---------------------------------------------------------------- approvals

function cmdLine(command, args) {
  const q = (s) => (/^[\w@%+=:,./-]+$/.test(s) ? s : JSON.stringify(s));
  return [command, ...(args || [])].map((s) => q(String(s))).join(' ');
}

let apprSeq = 0;
async function loadApprovals() {
  const seq = ++apprSeq;
  try {
    const a = await getJson('/api/approvals');
    if (seq !== apprSeq) return;
    renderApprovals(a);
    clearAlert($('appr-alert'));
  } catch (e) {
    showError($('appr-alert'), e);
  }
}

function renderApprovals(a) {
  const runs = a.runs || [];
  const plans = a.plans || [];
  $('appr-empty').hidden = runs.length + plans.length > 0;
  $('appr-runs-h').hidden = runs.length === 0;
  $('appr-plans-h').hidden = plans.length === 0;
  const list = $('appr-runs');
  keepFocus(list, () => list.replaceChildren(...runs.map(drawRun)));
  const box = $('appr-plans');
  keepFocus(box, () => box.replaceChildren(...plans.map(drawPlan)));
}

function drawRun(r) {
  const key = r.agentId + '\t' + cmdLine(r.command, r.args);
  const lineId = nextId('run');
  const alertBox = rowAlert('run:' + key);
  const base = { agentId: r.agentId, command: r.command, args: r.args || [] };
  const act = (label, fk, type, extra, cls) => el('button', {
    type: 'button', class: cls, 'data-fk': fk + key, 'aria-describedby': lineId, text: t(label),
    onclick: () => run(alertBox, type, Object.assign({}, base, extra), $('appr-status'), t('appr.done')),
  });
  const info = el('div', { class: 'row-main', id: lineId },
    el('strong', { text: agentName(r.agentId) }), ' ',
    el('code', { class: 'cmd', text: cmdLine(r.command, r.args) }), ' ',
    el('span', { class: 'hint', text: t('appr.count', { n: r.count || 1 }) }));
  if (r.firstRequestedAtMs) info.append(' ', el('span', { class: 'hint', text: fmtDateTime(r.firstRequestedAtMs) }));
  return el('li', { class: 'row' }, info,
    el('div', { class: 'actions' },
      act('appr.continue', 'c:', 'approveRun', { scope: 'exact', continue: true }, 'primary'),
      act('appr.exact', 'e:', 'approveRun', { scope: 'exact', continue: false }),
      act('appr.pattern', 'p:', 'approveRun', { scope: 'pattern', continue: false }),
      act('appr.reject', 'r:', 'rejectRun', {}, 'danger')),
    alertBox);
}

function drawPlan(p) {
  const hid = nextId('plan-h');
  const alertBox = rowAlert('plan:' + p.planId);
  const areas = [];
  const tasks = (p.tasks || []).map((task, i) => {
    const k = p.planId + '#' + i;
    const id = nextId('task');
    const ta = el('textarea', { id, rows: 3, 'data-fk': 'task:' + k });
    ta.value = S.planEdits.has(k) ? S.planEdits.get(k) : task.message || '';
    ta.addEventListener('input', () => S.planEdits.set(k, ta.value));
    areas.push({ to: task.to, ta });
    return el('div', { class: 'task' }, el('label', { for: id, text: t('appr.task', { to: task.to }) }), ta);
  });
  const forget = () => { for (const k of [...S.planEdits.keys()]) if (k.startsWith(p.planId + '#')) S.planEdits.delete(k); };
  const dispatch = el('button', { type: 'button', class: 'primary', 'data-fk': 'd:' + p.planId, text: t('appr.dispatch') });
  dispatch.addEventListener('click', async () => {
    const ok = await run(alertBox, 'dispatchPlan', { planId: p.planId, tasks: areas.map((x) => ({ to: x.to, message: x.ta.value })) }, $('appr-status'), t('appr.done'));
    if (ok) forget();
  });
  const discard = el('button', { type: 'button', class: 'danger', 'data-fk': 'x:' + p.planId, text: t('appr.discard') });
  discard.addEventListener('click', async () => {
    const ok = await run(alertBox, 'discardPlan', { planId: p.planId }, $('appr-status'), t('appr.done'));
    if (ok) forget();
  });
  return el('article', { class: 'plan panel', 'aria-labelledby': hid },
    el('h3', { id: hid, text: t('appr.plan', { agent: agentName(p.agentId), wave: p.wave }) }),
    ...tasks, el('div', { class: 'actions' }, dispatch, discard), alertBox);
}

// ---------------------------------------------------------------- conversations

let convSeq = 0;
async function loadConversations() {
  const seq = ++convSeq;
  try {
    const c = await getJson('/api/conversations');
    if (seq !== convSeq) return;
    renderConversations(c);
    clearAlert($('conv-alert'));
  } catch (e) {
    showError($('conv-alert'), e);
  }
  if (S.convViewId) viewConversation(S.convViewId, false);
}

function renderConversations(c) {
  const sessions = (c && c.sessions) || [];
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

let viewSeq = 0;
async function viewConversation(id, focus) {
  const seq = ++viewSeq;
  S.convViewId = id;
  const sec = $('conv-view');
  try {
    const c = await getJson('/api/conversations/' + encodeURIComponent(id));
    if (seq !== viewSeq) return;
    const s = S.convSessions.find((x) => x.id === id);
    $('conv-view-h').textContent = t('conv.viewTitle', { title: s ? sessionTitle(s) : id });
    const list = $('conv-msgs');
    const msgs = (c && c.messages) || [];
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

function bindConversations() {
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

// ---------------------------------------------------------------- settings

// The Settings page's module, loaded when the page is first opened (the village page stays
// small).
let settingsModule = null;
function loadSettings() {
  if (!settingsModule) {
    settingsModule = import('/settings.js').then((m) => {
      m.bindSettings({ $, el, t, getJson, showError, clearAlert, keepFocus, marked, fact, nextId, rowAlert, run });
      return m;
    });
    settingsModule.catch((e) => showError($('global-alert'), e));
  }
  return settingsModule.then((m) => m.loadSettings());
}

// ---------------------------------------------------------------- log

let logTimer = null;
let logFirst = true;
async function pollLog() {
  logTimer = null;
  if (S.page !== 'log') return;
  const pre = $('log-text');
  try {
    const r = await getJson('/api/log?lines=200');
    const text = ((r && r.lines) || []).join('\n');
    if (pre.textContent !== text) {
      const nearEnd = pre.scrollHeight - pre.scrollTop - pre.clientHeight < 48;
      pre.textContent = text;
      if (nearEnd || logFirst) pre.scrollTop = pre.scrollHeight;
    }
    logFirst = false;
    clearAlert($('log-alert'));
  } catch (e) {
    showError($('log-alert'), e);
  }
  if (S.page === 'log' && !logTimer) logTimer = setTimeout(pollLog, 2000);
}

// ---------------------------------------------------------------- events

function onCore(e) {
  const id = e.agentId;
  const now = performance.now();
  switch (e.type) {
    case 'agentStatusChanged': {
      const a = S.agents.get(id);
      if (a) a.status = e.status;
      S.eventAt.set(id + ':status', now);
      updateCard(id);
      refreshVillage();
      break;
    }
    case 'agentStatsUpdated': {
      const a = S.agents.get(id);
      if (a) {
        const st = Object.assign({}, a.stats || {});
        for (const k of ['uptimeSecs', 'totalTokens', 'promptTokens', 'cachedTokens', 'lastPromptTokens']) if (e[k] !== undefined) st[k] = e[k];
        a.stats = st;
        S.eventAt.set(id + ':stats', now);
        updateCard(id);
      }
      break;
    }
    case 'messageDelta':
      if (e.restart) endDelta(id); // the stream broke and is sent again: its pieces are void
      else onDelta(id, e.text || '');
      break;
    case 'messageSent':
      if (e.message) onMessage(e.message);
      refreshVillage();
      refreshPage('conversations');
      break;
    case 'agentTyping':
      S.typing.set(id, !!e.active);
      S.eventAt.set(id + ':typing', now);
      updateCard(id);
      if (id === S.chatAgent) updateChatControls();
      refreshVillage();
      break;
    case 'toolInvoked': {
      addLocal(id, { kind: 'tool', agentId: id, tool: e.tool, ok: !!e.ok, reason: e.reason, callId: e.callId });
      const a = S.agents.get(id);
      if (a) a.lastTool = { tool: e.tool, ok: !!e.ok };
      S.eventAt.set(id + ':tool', now);
      updateCard(id);
      refreshVillage();
      refreshPage('approvals');
      break;
    }
    case 'questionAsked':
    case 'questionSettled':
      asks(e);
    case 'dryRunEffect':
      addLocal(id, { ...e, kind: 'dryRun' });
      break;
    case 'turnInterrupted':
      endDelta(id);
      addLocal(id, { kind: 'interrupted', turnSeq: e.turnSeq });
      break;
    case 'agentFailed':
      addLocal(id, { kind: 'failed', error: e.error, code: e.code, fix: e.fix });
      refreshVillage();
      break;
    case 'runApprovalChanged':
      if (S.village) S.village.runApproval = e.mode;
      renderStatusBar();
      break;
    case 'planReviewBypassChanged':
      if (S.village) S.village.planReviewBypass = !!e.enabled;
      renderStatusBar();
      break;
    case 'killSwitchChanged':
      if (S.village) S.village.switch = e.to;
      renderStatusBar();
      refreshVillage();
      break;
    case 'sessionSwitched':
    case 'conversationCleared':
      S.chats.clear();
      S.locals.clear();
      refreshPage('chat');
      refreshPage('conversations');
      refreshVillage();
      break;
    case 'turnRecorded':
      if (id === S.chatAgent) refreshPage('chat');
      refreshVillage();
      refreshPage('approvals');
      refreshPage('conversations');
      break;
    default:
      refreshVillage();
      if (/^plan/.test(e.type || '')) refreshPage('approvals');
  }
}

function connectEvents() {
  const es = new EventSource('/api/events');
  es.addEventListener('core', (ev) => {
    let e;
    try {
      e = JSON.parse(ev.data);
    } catch {
      showError($('global-alert'), { code: 'GUI_BAD_EVENT', message: t('err.badEvent') });
      return;
    }
    onCore(e);
  });
  es.addEventListener('lagged', refreshAll);
  es.addEventListener('open', () => {
    const was = S.live;
    S.live = 'on';
    renderLive();
    if (was !== 'on' && S.opened) refreshAll();
    S.opened = true;
  });
  es.addEventListener('error', () => {
    S.live = es.readyState === EventSource.CLOSED ? 'off' : 'reconnecting';
    renderLive();
    if (es.readyState === EventSource.CLOSED) {
      showError($('global-alert'), { code: 'GUI_EVENTS_CLOSED', message: t('err.eventsClosed'), fix: t('err.eventsClosedFix') });
    }
  });
}

// ---------------------------------------------------------------- routing

let quietNext = false;
function go(hash, focus) {
  if (location.hash === hash) route(focus);
  else {
    quietNext = !focus;
    location.hash = hash;
  }
}

function route(focus) {
  const raw = location.hash.replace(/^#/, '');
  const parts = raw.split('/');
  const page = PAGES.includes(parts[0]) ? parts[0] : 'village';
  let arg = null;
  if (parts.length > 1) {
    try { arg = decodeURIComponent(parts.slice(1).join('/')); } catch { arg = null; }
  }
  const changed = S.page !== page;
  S.page = page;
  for (const sec of document.querySelectorAll('[data-page]')) sec.hidden = sec.dataset.page !== page;
  for (const a of document.querySelectorAll('#nav a[data-route]')) {
    if (a.dataset.route === page) a.setAttribute('aria-current', 'page');
    else a.removeAttribute('aria-current');
  }
  document.title = t('nav.' + page) + ' - ' + t('app.title');
  if (page === 'chat') {
    if (arg && arg !== S.chatAgent) S.chatAgent = arg;
    renderChatAgents();
    renderChat();
    loadChat();
  } else if (page === 'approvals') loadApprovals();
  else if (page === 'conversations') loadConversations();
  else if (page === 'settings' && (changed || S.settingsGen !== S.gen)) {
    S.settingsGen = S.gen;
    loadSettings();
  } else if (page === 'village' && changed) refreshVillage();
  else if (page === 'servants') castPage().then((m) => m.showCast());
  else if (page === 'files') editors().then((m) => (changed ? m.showFiles() : m.relabelFiles()));
  else if (page === 'stats') editors().then((m) => m.showStats());
  if (page === 'log') {
    if (changed || !logTimer) { logFirst = true; clearTimeout(logTimer); pollLog(); }
  } else if (logTimer) {
    clearTimeout(logTimer);
    logTimer = null;
  }
  if (focus) {
    const h = $('h-' + page);
    if (h) h.focus();
  }
}

// The styles of the pages loaded on first use, linked once.
function pagesStyle() {
  if (document.getElementById('pages-css')) return;
  document.head.append(el('link', { rel: 'stylesheet', href: '/pages.css', id: 'pages-css' }));
}

// The Files and Stats pages' module, loaded when one of them is first opened (the village
// page stays small).
let editorsModule = null;
function editors() {
  if (!editorsModule) {
    pagesStyle();
    editorsModule = pageWords().then(() => import('/editors.js')).then((m) => {
      m.bindEditors({ $, el, t, command, getJson, showError, clearAlert, flash, fmtNum, checkFields, placeFieldError });
      return m;
    });
    editorsModule.catch((e) => showError($('global-alert'), e));
  }
  return editorsModule;
}

let castModule = null;
function castPage() {
  if (!castModule) {
    pagesStyle();
    castModule = pageWords().then(() => import('/cast.js')).then((m) => {
      m.bindCast({ $, el, t, command, getJson, showError, clearAlert, flash, checkFields, placeFieldError });
      return m;
    });
    castModule.catch((e) => showError($('global-alert'), e));
  }
  return castModule;
}

function renderAll() {
  renderStatusBar();
  renderLive();
  renderCards();
  renderGroups();
  renderMap();
  renderChatAgents();
  tick();
}

// ---------------------------------------------------------------- boot

async function boot() {
  const stored = storedLang();
  const dictP = stored ? loadDict(stored).catch(() => ({})) : null;
  let v = null;
  try {
    v = await getJson('/api/village');
  } catch (e) {
    showError($('global-alert'), e);
  }
  lang = stored || (v && v.language === 'ja' ? 'ja' : 'en');
  try {
    dict = await (dictP || loadDict(lang));
  } catch (e) {
    showError($('global-alert'), e);
  }
  applyStatic();
  if (v) applyVillage(v, -1);
  bindStatusBar();
  $('start-batch').addEventListener('click', () => run($('village-alert'), 'startBatch'));
  bindChat();
  bindConversations();
  $('lang').addEventListener('change', (e) => {
    setLang(e.target.value, true).catch((err) => showError($('global-alert'), err));
  });
  window.addEventListener('hashchange', () => { const q = quietNext; quietNext = false; route(!q); });
  renderAll();
  route(false);
  setInterval(tick, 1000);
  connectEvents();
}

boot();
