// Fuseforks web GUI: forms over two JSON files of the Files page — the tasks of
// schedules.json and the model templates of world.json. A form edits the editor's text (the
// one source: parsed, changed, written back with every field it does not show kept), so the
// server's check, the next-due preview and Ctrl+S work as for typing; numbers keep their text.

import { checkFields } from '/alerts.js';
import { el } from '/dom.js';
import { t } from '/i18n.js';

// The editor's side, from editors.js: { text(): string, setText(s, rebuild), nextDue(): rows, agents(): [{id, name}] }
const editor = {};

export function bindForms(calls) {
  Object.assign(editor, calls);
}

const WEEKDAYS = ['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun'];

// Every number and string keeps its source text while it is unchanged (`1.50`, a number past
// 2^53, `"\u00e9"`): the parse notes each one's text by its holder and key (JSON.parse's
// source access, Chromium 114+, Firefox 135+), and the write puts that text back
// (JSON.rawJSON) where the value is still the one parsed, so a form change rewrites no other
// field. A browser without them writes such values in the plain way.
const exact = typeof JSON.rawJSON === 'function';
const sources = new WeakMap(); // holder -> Map(key -> [value, source text])

function note(key, value, context) {
  if (exact && context && typeof context.source === 'string' && (typeof value === 'number' || typeof value === 'string')) {
    if (!sources.has(this)) sources.set(this, new Map());
    sources.get(this).set(key, [value, context.source]);
  }
  return value;
}

function kept(key, value) {
  const seen = exact && sources.get(this);
  const was = seen?.get(key);
  return was && was[0] === value ? JSON.rawJSON(was[1]) : value;
}

function parsed() {
  try {
    return JSON.parse(editor.text(), note);
  } catch {
    return undefined; // the text is being typed: the form waits for valid JSON
  }
}

// A field's change leaves the form as it is (the focus and what is being typed stay); a change
// of the form's shape (a task added or removed, another kind of repeat) asks for a rebuild.
function write(value, rebuild = false) {
  editor.setText(JSON.stringify(value, kept, 2) + '\n', rebuild);
}

// A value its own attributes refuse (min, max, step, required) is marked at the field (alerts.js's
// checkFields) and not written into the text.
function input(attrs, onChange) {
  const e = el('input', attrs);
  e.addEventListener('change', () => { if (checkFields(e, false)) onChange(e); });
  return e;
}

function select(label, options, value, onChange) {
  const e = el('select', { 'aria-label': label }, ...options.map(([v, text]) => el('option', { value: v, text })));
  e.value = value;
  e.addEventListener('change', () => onChange(e.value));
  return e;
}

// ---------------------------------------------------------------- schedules.json

/** The form of schedules.json's tasks, or a note when the text is not a task list. */
export function schedulesForm(box) {
  const tasks = parsed();
  if (!Array.isArray(tasks)) {
    box.replaceChildren(el('p', { class: 'hint', text: t('forms.notList') }));
    return;
  }
  const change = (i, fn, rebuild) => { const all = parsed(); if (Array.isArray(all) && all[i]) { fn(all[i]); write(all, rebuild); } };
  const due = new Map((editor.nextDue() || []).map((r) => [r.id, r]));
  const agents = editor.agents();
  const rows = tasks.map((task, i) => {
    const rec = task.recurrence || {};
    const name = task.id || String(i + 1);
    const kind = select(t('forms.kindOf', { id: name }), [['interval', t('forms.interval')], ['daily', t('forms.daily')], ['weekly', t('forms.weekly')]], rec.kind || 'daily', (v) => change(i, (x) => {
      x.recurrence = v === 'interval' ? { kind: v, everyMinutes: 60 } : v === 'daily' ? { kind: v, hour: 9, minute: 0 } : { kind: v, weekday: 'mon', hour: 9, minute: 0 };
    }, true));
    const when = [];
    if (rec.kind === 'interval') {
      when.push(input({ type: 'number', min: 1, step: 1, required: true, value: rec.everyMinutes ?? 60, 'aria-label': t('forms.every', { id: name }) }, (e) => change(i, (x) => { x.recurrence.everyMinutes = Number(e.value); })));
    } else {
      if (rec.kind === 'weekly') {
        when.push(select(t('forms.weekday', { id: name }), WEEKDAYS.map((d) => [d, t('forms.wd.' + d)]), rec.weekday || 'mon', (v) => change(i, (x) => { x.recurrence.weekday = v; })));
      }
      const hh = String(rec.hour ?? 9).padStart(2, '0');
      const mm = String(rec.minute ?? 0).padStart(2, '0');
      when.push(input({ type: 'time', required: true, value: hh + ':' + mm, 'aria-label': t('forms.time', { id: name }) }, (e) => change(i, (x) => {
        const [h, m] = e.value.split(':').map(Number);
        x.recurrence.hour = h; x.recurrence.minute = m;
      })));
    }
    const next = due.get(task.id);
    return el('li', { class: 'form-row' },
      input({ type: 'text', required: true, value: task.id || '', 'aria-label': t('forms.taskId', { n: i + 1 }) }, (e) => change(i, (x) => { x.id = e.value; })),
      select(t('forms.to', { id: name }), agents.map((a) => [a.id, a.name]), task.to || '', (v) => change(i, (x) => { x.to = v; })),
      input({ type: 'text', value: task.message || '', 'aria-label': t('forms.message', { id: name }) }, (e) => change(i, (x) => { x.message = e.value; })),
      kind, ...when,
      el('label', { class: 'check' }, input({ type: 'checkbox', checked: task.enabled !== false, 'aria-label': t('forms.enabledOf', { id: name }) }, (e) => change(i, (x) => { x.enabled = e.checked; })), ' ', el('span', { text: t('forms.enabled') })),
      el('span', { class: 'hint', text: next ? (next.enabled === false ? t('files.dueOff') : next.nextDue || t('files.dueNone')) : '' }),
      el('button', { type: 'button', text: t('forms.remove', { id: name }), onclick: () => { const all = parsed(); if (Array.isArray(all)) { all.splice(i, 1); write(all, true); } } }));
  });
  const add = el('button', { type: 'button', text: t('forms.addTask'), onclick: () => {
    const all = parsed();
    if (!Array.isArray(all)) return;
    all.push({ id: 'task-' + (all.length + 1), to: agents[0] ? agents[0].id : '', message: '', recurrence: { kind: 'daily', hour: 9, minute: 0 }, enabled: true });
    write(all, true);
  } });
  box.replaceChildren(el('ol', { class: 'form-list' }, ...rows), add);
}

// ---------------------------------------------------------------- world.json's templates

// [key, input type, the input's limits (checked before the text is changed)]
const TEMPLATE_FIELDS = [
  ['name', 'text'], ['baseUrl', 'url', { required: true }], ['model', 'text', { required: true }],
  ['maxOutputTokens', 'number', { min: 1, step: 1 }], ['temperature', 'number', { min: 0, max: 2, step: 'any' }],
  ['contextLength', 'number', { min: 1, step: 1 }],
];

/** The form of world.json's model templates. */
export function templatesForm(box) {
  const world = parsed();
  if (!world || !Array.isArray(world.modelTemplates)) {
    box.replaceChildren(el('p', { class: 'hint', text: t('forms.notWorld') }));
    return;
  }
  const change = (i, fn) => { const w = parsed(); if (w?.modelTemplates?.[i]) { fn(w.modelTemplates[i]); write(w); } };
  const rows = world.modelTemplates.map((tp, i) => {
    const id = tp.id || String(i + 1);
    const fields = TEMPLATE_FIELDS.map(([key, type, limits]) => el('label', { class: 'field' }, el('span', { text: t('forms.tpl.' + key) }), ' ',
      input({ type, value: tp[key] ?? '', ...limits, 'aria-label': t('forms.tplField', { field: t('forms.tpl.' + key), id }) }, (e) => change(i, (x) => {
        if (type === 'number') {
          if (e.value === '') delete x[key]; else x[key] = Number(e.value);
        } else x[key] = e.value;
      }))));
    const flags = [['useTools', true], ['streaming', true]].map(([key, dflt]) => el('label', { class: 'check' },
      input({ type: 'checkbox', checked: (tp[key] ?? dflt) !== false, 'aria-label': t('forms.tplField', { field: t('forms.tpl.' + key), id }) }, (e) => change(i, (x) => {
        if (e.checked === dflt) delete x[key]; else x[key] = e.checked;
      })), ' ', el('span', { text: t('forms.tpl.' + key) })));
    return el('li', { class: 'form-row' }, el('strong', { text: id }), ...fields, ...flags);
  });
  box.replaceChildren(el('p', { class: 'hint', text: t('forms.tplNote') }), el('ol', { class: 'form-list' }, ...rows));
}
