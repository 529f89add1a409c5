// What the page says back: an error next to its control (`role="alert"`, in Japanese from
// codes-ja.json once ja is chosen), a field's own problem beside it (aria-invalid,
// -describedby), a short success text, and `run`, one command with all of these.

import { command } from '/api.js';
import { $, el, nextId } from '/dom.js';
import { t } from '/i18n.js';
import { refreshSoon } from '/refresh.js';
import { S } from '/store.js';

// A server code's words in ja (its English as a detail), else the error's own.
export function errWords(err) {
  const w = S.lang === 'ja' && err && err.server && S.codes[err.code];
  return w ? { message: w.message, fix: w.fix, english: [err.message, err.fix].filter(Boolean).join(' ') }
    : { message: err?.message || String(err), fix: err?.fix };
}

const shown = new Map(); // alert box -> its error (redrawn on a language switch)
// The alert of a row of a list that is drawn again on live updates: its error survives.
const rowErrors = new Map();

export function showError(box, err) {
  const code = err?.code || 'GUI_CLIENT';
  const w = errWords(err);
  box.replaceChildren(el('strong', { class: 'code', text: code }), ' ', el('span', { text: w.message }));
  if (w.fix) box.append(' ', el('span', { class: 'fix', text: t('err.fix') + ' ' + w.fix }));
  if (w.english) box.append(el('details', null, el('summary', { text: t('err.english') }), el('span', { lang: 'en', text: w.english })));
  box.hidden = false;
  shown.set(box, err);
  if (box.dataset.ek) rowErrors.set(box.dataset.ek, err);
}

export function clearAlert(box) {
  shown.delete(box);
  if (box.dataset.ek) rowErrors.delete(box.dataset.ek);
  if (!box.hidden || box.firstChild) { box.replaceChildren(); box.hidden = true; }
}

export function rowAlert(key) {
  const box = el('p', { class: 'alert', role: 'alert', hidden: true, 'data-ek': key });
  const err = rowErrors.get(key);
  if (err) showError(box, err);
  return box;
}

const flashTimers = new WeakMap();
export function flash(box, text) {
  box.textContent = text;
  clearTimeout(flashTimers.get(box));
  flashTimers.set(box, setTimeout(() => { box.textContent = ''; }, 4000));
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

export const marked = new Set(); // controls marked now
function markField(c, words) {
  const text = typeof words === 'function' ? words() : words;
  let note = c.fieldNote;
  c.dataset.describedby ??= c.getAttribute('aria-describedby') || '';
  const base = c.dataset.describedby;
  if (!text) {
    if (note) note.remove();
    c.removeAttribute('aria-invalid');
    if (base) c.setAttribute('aria-describedby', base); else c.removeAttribute('aria-describedby');
    marked.delete(c);
    return;
  }
  if (!note) {
    note = el('span', { class: 'field-error', id: nextId('fe') });
    c.fieldNote = note;
  }
  note.textContent = text;
  if (!note.isConnected) c.after(note);
  c.setAttribute('aria-invalid', 'true');
  c.setAttribute('aria-describedby', (base + ' ' + note.id).trim());
  c.fieldWords = words;
  marked.add(c);
}

// Marks each bad control of `scope` (or it), focuses the first; true when all hold.
export function checkFields(scope, focus = true) {
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
export function placeFieldError(scope, err) {
  let c = null;
  for (let p = scope && err?.field; p && !c;) {
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

/** Every error and field note shown, in the page's words again (after a language switch). */
export function redrawAlerts() {
  for (const [box, err] of shown) if (box.isConnected) showError(box, err); else shown.delete(box);
  for (const c of marked) if (c.isConnected) markField(c, c.fieldWords); else marked.delete(c);
}

// Runs one command; shows its error in `alertBox` (and returns null) or clears it. A `scope`'s
// fields are checked first (nothing sent while one is wrong); a refused field is marked there.
export async function run(alertBox, type, fields, statusBox, okText, scope) {
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
