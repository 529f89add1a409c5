// Fuseforks web GUI: the Files page (an editor for every village file, checked by the server's
// parsers as you type, Ctrl+S to save, and the drafting assistant beside it) and the Stats page
// (tables and SVG charts), loaded when one first opens (lazy.js); the editor itself is
// code.js (CodeMirror).

import { bindForms, schedulesForm, templatesForm } from '/forms.js';
import { createCodeEditor, kindOf } from '/code.js';
import { clearAlert, flash, showError } from '/alerts.js';
import { command, getJson } from '/api.js';
import { $, el, fmtNum } from '/dom.js';
import { t } from '/i18n.js';
import { latest } from '/latest.js';

const E = {
  editor: null, // the code editor (code.js)
  files: [],
  path: null,
  saved: '', // the text as last read or saved
  findings: [],
  templates: [], // every model template; those without useTools are listed disabled
  history: [], // the assistant's conversation (opaque to the page)
  draft: null,
  busy: false,
};

export function bindEditors() {
  E.editor = createCodeEditor($('file-text'), {
    t, labelKey: 'files.text', onChange: onInput, onSave: save,
  });
  bindForms({
    text: () => E.editor.text(),
    // A field's change leaves the form as it is until the focus leaves it (labels may follow
    // a changed id); a change of shape rebuilds it at once.
    setText: (s, rebuild) => { E.editor.replaceAll(s); if (rebuild) renderForm(); else E.formStale = true; },
    nextDue: () => E.nextDue,
    agents: () => E.files.filter((f) => f.draft === 'skill').map((f) => ({ id: f.owner, name: f.ownerName })),
  });
  $('file-pick').addEventListener('change', (e) => openFile(e.target.value));
  $('file-form').addEventListener('focusout', (e) => {
    if (E.formStale && !$('file-form').contains(e.relatedTarget)) renderForm();
  });
  // Leaving or reloading the page with unsaved text or an assistant conversation asks first
  // (the browser's own prompt).
  window.addEventListener('beforeunload', (e) => { if ((E.path && dirty()) || talking()) e.preventDefault(); });
  $('file-find').addEventListener('click', () => E.editor.find());
  $('file-fold').addEventListener('click', () => { E.editor.foldAll(); E.editor.focus(); });
  $('file-unfold').addEventListener('click', () => { E.editor.unfoldAll(); E.editor.focus(); });
  $('file-save').addEventListener('click', save);
  $('assist-send').addEventListener('click', () => ask(false));
  $('assist-draft').addEventListener('click', () => ask(true));
  $('assist-use').addEventListener('click', useDraft);
  $('assist-undo').addEventListener('click', undoDraft);
  $('assist-new').addEventListener('click', () => {
    if (talking() && !confirm(t('assist.discard'))) return;
    forgetConversation();
    renderAssist();
  });
  $('assist-template').addEventListener('change', (e) => rememberTemplate(e.target.value));
  $('stats-period').addEventListener('change', loadStats);
  $('stats-closing').addEventListener('change', loadStats);
  $('stats-fetch-prices').addEventListener('click', fetchPrices);
}

export async function showFiles() {
  try {
    const [list, settings] = await Promise.all([getJson('/api/files'), getJson('/api/settings')]);
    E.files = list.files || [];
    E.templates = settings.templates || [];
  } catch (e) {
    showError($('file-alert'), e);
    return;
  }
  relabelFiles();
  renderPicker();
  renderTemplates();
  if (!E.path && E.files.length) openFile(E.files[0].path);
}

/** The Files page in the page's language again (after the user picked another). */
export function relabelFiles() {
  if (!E.editor) return;
  E.editor.relabel();
  renderFindings();
  renderState();
  renderTemplates();
  renderAssist();
  renderSecrets();
  renderNextDue();
  renderForm();
}

function label(f) {
  return f.ownerName ? f.ownerName + ' — ' + f.path : f.path;
}

function renderPicker() {
  const pick = $('file-pick');
  pick.replaceChildren(...E.files.map((f) => el('option', { value: f.path, text: label(f) })));
  if (E.path) pick.value = E.path;
}

// Every template is listed; one without useTools is disabled with the reason (it cannot hand
// a draft over). The choice is remembered on this device; a remembered id that is gone or no
// longer usable is dropped.
const REMEMBER_KEY = 'fuseforks.assist.v1';

function usable() {
  return E.templates.filter((tp) => tp.useTools !== false);
}

function rememberedTemplate() {
  try {
    const v = JSON.parse(localStorage.getItem(REMEMBER_KEY) || 'null');
    return v && typeof v.templateId === 'string' ? v.templateId : null;
  } catch {
    return null;
  }
}

function rememberTemplate(templateId) {
  try {
    if (templateId) localStorage.setItem(REMEMBER_KEY, JSON.stringify({ templateId }));
    else localStorage.removeItem(REMEMBER_KEY);
  } catch { /* private mode: the choice holds for this page */ }
}

function renderTemplates() {
  const pick = $('assist-template');
  const ok = new Set(usable().map((tp) => tp.id));
  const remembered = rememberedTemplate();
  if (remembered && !ok.has(remembered)) rememberTemplate(null);
  const was = ok.has(pick.value) ? pick.value : ok.has(remembered) ? remembered : usable()[0]?.id;
  pick.replaceChildren(...E.templates.map((tp) => {
    const name = tp.name || tp.id;
    const off = !ok.has(tp.id);
    return el('option', { value: tp.id, text: off ? t('assist.noTools', { name }) : name, disabled: off });
  }));
  if (was) pick.value = was;
  $('assist-none').hidden = ok.size > 0;
  $('assist-none').textContent = t('assist.noTemplate');
}

const fileRead = latest();
async function openFile(path) {
  if (!mayLeave()) {
    $('file-pick').value = E.path;
    return;
  }
  // Only the last file asked for is shown (an earlier answer that comes late is dropped).
  // The editor says it is busy until the file is in it, so nothing typed meanwhile is lost
  // unseen (assistive technology and the browser test wait on it).
  const current = fileRead();
  $('file-text').setAttribute('aria-busy', 'true');
  try {
    const r = await getJson('/api/files/' + path.split('/').map(encodeURIComponent).join('/'));
    if (!current()) return;
    E.path = r.path;
    E.hash = r.hash || null;
    E.saved = r.text || '';
    E.editor.load(E.saved, kindOf(E.path));
    E.findings = r.findings || [];
    E.secrets = r.secrets || [];
    forgetConversation();
    clearAlert($('file-alert'));
  } catch (e) {
    if (current()) showError($('file-alert'), e);
    return;
  } finally {
    if (current()) $('file-text').removeAttribute('aria-busy');
  }
  $('file-pick').value = E.path;
  renderFindings();
  renderState();
  renderAssist();
  renderSecrets();
  E.nextDue = null;
  renderNextDue();
  renderForm();
  if (E.path === 'schedules.json') check();
}

// The form over schedules.json or world.json's templates (it edits the editor's text). Built
// again, the field that had the focus gets it back (found by its accessible name).
function renderForm() {
  const kind = E.path === 'schedules.json' ? 'schedules' : E.path === 'world.json' ? 'templates' : null;
  $('file-form-sec').hidden = !kind;
  if (!kind) return;
  const box = $('file-form');
  const name = (e) => e.getAttribute('aria-label') || e.textContent;
  const had = box.contains(document.activeElement) ? name(document.activeElement) : null;
  E.formStale = false;
  $('file-form-h').textContent = t(kind === 'schedules' ? 'forms.schedules' : 'forms.templates');
  (kind === 'schedules' ? schedulesForm : templatesForm)(box);
  if (had === null) return;
  // The same control again, else (its row removed) the form's last button.
  const controls = [...box.querySelectorAll('input, select, button')];
  const back = controls.find((e) => name(e) === had) || controls.filter((e) => e.tagName === 'BUTTON').pop();
  if (back) back.focus();
}

// For schedules.json: each task's next due time, from the last check.
function renderNextDue() {
  const rows = E.path === 'schedules.json' ? E.nextDue : null;
  $('file-due-sec').hidden = !rows;
  if (!rows) return;
  $('file-due').replaceChildren(...rows.map((r) => el('li', null,
    el('strong', { text: r.id }), ' → ' + r.to + ': ',
    el('span', { text: r.enabled === false ? t('files.dueOff') : (r.nextDue || t('files.dueNone')) }))));
}

// One write-only field per `${secret:NAME}` the file references (the value never comes back).
function renderSecrets() {
  const list = E.secrets || [];
  $('file-secrets-sec').hidden = list.length === 0;
  $('file-secrets').replaceChildren(...list.map((s) => {
    const input = el('input', { type: 'password', autocomplete: 'off', 'aria-label': t('files.secretFor', { name: s.name }) });
    const state = el('span', { class: 'hint', role: 'status', text: s.hasValue ? t('files.secretStored') : t('files.secretMissing') });
    const alertBox = el('p', { class: 'alert', role: 'alert', hidden: true });
    const save = el('button', { type: 'button', text: t('files.saveSecret', { name: s.name }), onclick: async () => {
      try {
        await command('setMcpSecret', { name: s.name, value: input.value });
        input.value = '';
        s.hasValue = true;
        clearAlert(alertBox);
        flash(state, t('files.secretStored'));
      } catch (e) {
        showError(alertBox, e);
      }
    } });
    return el('li', null, el('code', { text: '${secret:' + s.name + '}' }), ' ', input, ' ', save, ' ', state, alertBox);
  }));
}

function dirty() {
  return E.editor.text() !== E.saved;
}

// Whether an assistant conversation is open (it lives in this page only: lost when left).
function talking() {
  return E.history.length > 0 || (E.log || []).length > 0 || !!E.draft;
}

function forgetConversation() {
  E.history = [];
  E.log = [];
  E.draft = null;
  E.before = null;
}

// Leaving this file loses its unsaved text and the assistant conversation: ask first.
function mayLeave() {
  const unsaved = E.path && dirty();
  const talk = talking();
  if (!unsaved && !talk) return true;
  return confirm(t(unsaved && talk ? 'files.discardBoth' : unsaved ? 'files.discard' : 'assist.discard'));
}

function onInput() {
  renderState();
  clearTimeout(E.checkTimer);
  E.checkTimer = setTimeout(check, 300);
}

async function check() {
  const text = E.editor.text();
  try {
    const r = await command('checkFile', { path: E.path, text });
    if (E.editor.text() !== text) return; // typed meanwhile: the next check follows
    E.findings = r.findings || [];
    E.nextDue = r.nextDue || null;
    renderNextDue();
    // Not while a field of the form has the focus: what is being typed there would be lost.
    if (!$('file-form').contains(document.activeElement)) renderForm();
    else E.formStale = true; // built again when the focus leaves the form
    $('file-check-ms').textContent = t('files.checked', { ms: ((r.checkMicros || 0) / 1000).toFixed(1) });
  } catch (e) {
    showError($('file-alert'), e);
  }
  renderFindings();
}

function renderFindings() {
  const list = $('file-findings');
  list.replaceChildren(...E.findings.map((f) => el('li', { class: 'finding' },
    el('strong', { text: t('files.at', { line: f.line, col: f.col }) }), ' ',
    el('span', { text: f.message }), f.fix ? el('span', { class: 'fix', text: ' — ' + f.fix }) : null)));
  $('file-ok').hidden = E.findings.length > 0;
  E.editor.setProblems(E.findings); // at their line and column, and aria-invalid while there are any
}

function renderState() {
  $('file-state').textContent = dirty() ? t('files.unsaved') : t('files.saved');
}

async function save() {
  const text = E.editor.text();
  try {
    const r = await command('saveFile', { path: E.path, text, baseHash: E.hash });
    E.hash = r?.hash || null;
    E.saved = r && typeof r.text === 'string' ? r.text : text;
    // The village writes JSON in its own layout: the editor shows the file as it now is (one
    // edit, so Ctrl+Z brings the typed layout back), unless more was typed meanwhile.
    if (E.saved !== text && E.editor.text() === text) E.editor.replaceAll(E.saved);
    E.findings = [];
    clearAlert($('file-alert'));
    flash($('file-status'), t('files.savedNow', { path: E.path }));
  } catch (e) {
    showError($('file-alert'), e);
  }
  renderFindings();
  renderState();
}

// ---------------------------------------------------------------- the assistant

function draftKind() {
  const f = E.files.find((x) => x.path === E.path);
  return f?.draft ? { kind: f.draft, id: f.owner } : null;
}

function renderAssist() {
  const target = draftKind();
  $('assist-sec').hidden = !target;
  if (!target) return;
  // The conversation as the page saw it: what the user sent and the replies' text (the history
  // itself is the core's, sent back as it came, never read here).
  $('assist-log').replaceChildren(...(E.log || []).map(([role, text]) => el('li', { class: 'assist-' + role },
    el('strong', { text: t('assist.' + role) + ': ' }), el('span', { text }))));
  const d = E.draft;
  $('assist-result').hidden = !d;
  if (d) {
    $('assist-draft-text').textContent = d.content;
    const v = d.validation;
    let note = t('assist.draftChars', { n: d.draftChars });
    if (v) note += ' · ' + (v.valid ? t('assist.valid', { n: d.attempts }) : t('assist.invalid', { n: d.attempts, at: v.location || '-', msg: v.message || '' }));
    if (d.notes) note += ' · ' + t('assist.notes') + ' ' + d.notes;
    $('assist-draft-note').textContent = note;
    const diff = lineDiff(E.editor.text(), d.content);
    $('assist-draft-diff').textContent = t('assist.diff', {
      from: [...E.editor.text()].length, to: d.draftChars, added: diff.added, removed: diff.removed,
    });
  }
  $('assist-undo').hidden = E.before === null || E.before === undefined;
  $('assist-send').disabled = E.busy || !usable().length;
  $('assist-draft').disabled = E.busy || !usable().length;
}

async function ask(force) {
  const target = draftKind();
  const input = $('assist-input').value.trim();
  if (!target || (!input && !force)) return;
  E.busy = true;
  $('assist-status').textContent = t('assist.waiting');
  renderAssist();
  const request = {
    target, templateId: $('assist-template').value, history: E.history,
    input: input || null, forceDraft: !!force, current: E.editor.text(),
  };
  try {
    const r = await command('assist', { request });
    const reply = r.reply || {};
    E.history = E.history.concat(reply.appended || []);
    E.log = (E.log || []).concat(input ? [['user', input]] : [], reply.text ? [['assistant', reply.text]] : []);
    E.draft = reply.type === 'draft' ? reply : null;
    $('assist-input').value = '';
    clearAlert($('assist-alert'));
    $('assist-status').textContent = '';
  } catch (e) {
    showError($('assist-alert'), e);
    $('assist-status').textContent = '';
  }
  E.busy = false;
  renderAssist();
}

// Lines added and removed from `a` to `b` (a longest common subsequence of lines; past 2,000
// lines a side, counted as sets of lines instead).
export function lineDiff(a, b) {
  const x = a.split('\n');
  const y = b.split('\n');
  if (x.length > 2000 || y.length > 2000) {
    const left = new Set(x);
    const right = new Set(y);
    return { added: y.filter((l) => !left.has(l)).length, removed: x.filter((l) => !right.has(l)).length };
  }
  let prev = new Array(y.length + 1).fill(0);
  for (let i = 1; i <= x.length; i++) {
    const row = new Array(y.length + 1).fill(0);
    for (let j = 1; j <= y.length; j++) row[j] = x[i - 1] === y[j - 1] ? prev[j - 1] + 1 : Math.max(prev[j], row[j - 1]);
    prev = row;
  }
  const same = prev[y.length];
  return { added: y.length - same, removed: x.length - same };
}

function useDraft() {
  if (!E.draft) return;
  const text = E.editor.text();
  if (text.trim() && !confirm(t('assist.replace'))) return;
  E.before = text; // "Take the draft back out" (and Ctrl+Z) bring it back
  E.editor.replaceAll(E.draft.content);
  flash($('file-status'), t('assist.used'));
  renderAssist();
  E.editor.focus();
}

function undoDraft() {
  if (E.before === null || E.before === undefined) return;
  E.editor.replaceAll(E.before);
  E.before = null;
  flash($('file-status'), t('assist.undone'));
  renderAssist();
  E.editor.focus();
}

// ---------------------------------------------------------------- stats

export async function showStats() {
  await loadStats();
}

async function loadStats() {
  const month = $('stats-period').value;
  const closing = $('stats-closing').value;
  let query = month ? '?period=' + encodeURIComponent(month) : '';
  if (month && closing) query += '&closing=' + encodeURIComponent(closing);
  try {
    const r = await getJson('/api/stats' + query);
    clearAlert($('stats-alert'));
    renderStats(r);
  } catch (e) {
    showError($('stats-alert'), e);
  }
}

// "Fetch prices": the shelf's price table fills the templates of the models it lists (the
// CLI's `pricing fetch`), then the figures are drawn again with the new rates.
async function fetchPrices() {
  const button = $('stats-fetch-prices');
  button.disabled = true;
  try {
    const r = await command('fetchPrices', {});
    clearAlert($('stats-alert'));
    const updated = (r.templates || []).filter((x) => x.outcome === 'updated').length;
    const missing = (r.templates || []).filter((x) => x.outcome === 'not_in_table').map((x) => x.templateId);
    flash($('stats-prices'), t('stats.pricesFetched', { updated, asOf: r.asOf, missing: missing.join(', ') || '-' }));
    await loadStats();
  } catch (e) {
    showError($('stats-alert'), e);
  } finally {
    button.disabled = false;
  }
}

function cell(v) {
  return el('td', { text: typeof v === 'number' ? fmtNum(v) : v == null ? '-' : String(v) });
}

function money(v) {
  return typeof v === 'number' ? '≈ $' + v.toFixed(4) : '-';
}

function renderStats(r) {
  const byAgent = new Map();
  for (const row of r.rows || []) {
    const a = byAgent.get(row.agentId) || { turns: 0, prompt: 0, completion: 0, effective: 0, cost: null };
    a.turns += row.turns; a.prompt += row.prompt; a.completion += row.completion; a.effective += row.effective;
    if (typeof row.costUsd === 'number') a.cost = (a.cost || 0) + row.costUsd;
    byAgent.set(row.agentId, a);
  }
  // Servants and judges in tables of their own (a judge's turns are its routing calls).
  const judges = new Set(r.judges || []);
  const row = ([id, a]) => el('tr', null,
    el('th', { scope: 'row', text: id }), cell(a.turns), cell(a.prompt), cell(a.completion), cell(a.effective), cell(money(a.cost)));
  const all = [...byAgent];
  $('stats-rows').replaceChildren(...all.filter(([id]) => !judges.has(id)).map(row));
  const judged = all.filter(([id]) => judges.has(id));
  $('stats-judges').replaceChildren(...judged.map(row));
  $('stats-judges-empty').hidden = judged.length > 0;
  $('stats-detail').replaceChildren(...(r.rows || []).map((row) => el('tr', null,
    el('th', { scope: 'row', text: row.sessionId.slice(0, 8) }), cell(row.agentId), cell(row.model), cell(row.stop),
    cell(row.turns), cell(row.prompt + row.completion), cell(row.effective), cell(money(row.costUsd)))));
  // The assistant's calls: a table of their own (its "turns" are model calls), outside the
  // turns' totals but inside the money spent (`cost`).
  const assist = r.assist?.rows || [];
  $('stats-assist').replaceChildren(...assist.map((a) => el('tr', null,
    el('th', { scope: 'row', text: a.model + ' (' + a.templateId + ')' }), cell(a.turns), cell(a.prompt), cell(a.completion), cell(a.effective), cell(money(a.costUsd)))));
  $('stats-assist-empty').hidden = assist.length > 0;
  const tt = r.totals || {};
  const at = r.assist?.total || {};
  $('stats-total').textContent = t('stats.total', { turns: fmtNum(tt.turns || 0), effective: fmtNum(tt.effective || 0), cost: money(tt.costUsd), priced: tt.pricedRows || 0, rows: (tt.pricedRows || 0) + (tt.unpricedRows || 0) });
  // How old the prices behind ≈ $ are (the oldest date of a template that priced a row).
  $('stats-total').title = r.pricingAsOf ? t('stats.pricesAge', { asOf: r.pricingAsOf, days: r.pricingAgeDays }) : '';
  if (r.pricingAsOf) $('stats-total').textContent += ' · ' + t('stats.pricesAge', { asOf: r.pricingAsOf, days: r.pricingAgeDays });
  $('stats-spent').textContent = t('stats.spent', { cost: money(r.cost), turns: money(tt.costUsd), assist: money(at.costUsd) });
  bars($('chart-days'), (r.days || []).map((d) => [d.day.slice(5), d.tokens]), t('stats.chartDays'));
  bars($('chart-agents'), (r.agents || []).filter((a) => a.costUsd > 0).map((a) => [a.agentId, a.costUsd]), t('stats.chartCost'), (v) => '$' + v.toFixed(4));
}

// A bar chart drawn as SVG: one labelled bar per value (a <title> on each for its figure).
function bars(svg, data, name, fmt = (v) => fmtNum(v)) {
  const NS = 'http://www.w3.org/2000/svg';
  const make = (tag, attrs, text) => {
    const e = document.createElementNS(NS, tag);
    for (const k of Object.keys(attrs)) e.setAttribute(k, String(attrs[k]));
    if (text != null) e.textContent = text;
    return e;
  };
  const W = 480, Hh = 180, pad = 24;
  svg.setAttribute('viewBox', '0 0 ' + W + ' ' + (Hh + pad));
  svg.setAttribute('aria-label', name);
  const kids = [make('title', {}, name)];
  const max = Math.max(1e-9, ...data.map((d) => d[1] || 0));
  const w = data.length ? Math.min(48, (W - pad) / data.length) : 0;
  data.forEach(([label, v], i) => {
    const h = Math.round(((v || 0) / max) * (Hh - pad));
    const x = pad + i * w;
    const bar = make('rect', { x: x + 2, y: Hh - h, width: Math.max(1, w - 4), height: h, class: 'bar' });
    bar.append(make('title', {}, label + ': ' + fmt(v || 0)));
    kids.push(bar, make('text', { x: x + w / 2, y: Hh + 14, 'text-anchor': 'middle', class: 'bar-label' }, label));
  });
  if (!data.length) kids.push(make('text', { x: W / 2, y: Hh / 2, 'text-anchor': 'middle', class: 'bar-label' }, t('stats.noData')));
  svg.replaceChildren(...kids);
}
