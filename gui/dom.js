// DOM and formatting helpers: elements built from data (text only, never HTML), ids, dates,
// numbers, and a list rebuilt without losing the focus.

import { t } from '/i18n.js';
import { S } from '/store.js';

export const $ = (id) => document.getElementById(id);

export function el(tag, attrs, ...kids) {
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

const SVG = 'http://www.w3.org/2000/svg';
export function svg(tag, attrs) {
  const e = document.createElementNS(SVG, tag);
  for (const k of Object.keys(attrs)) e.setAttribute(k, String(attrs[k]));
  return e;
}

export function fact(dl, label) {
  const dd = el('dd');
  dl.append(el('dt', { text: label }), dd);
  return dd;
}

const uid = { n: 0 };
export const nextId = (p) => p + '-' + ++uid.n;

function pad(n, w = 2) { return String(n).padStart(w, '0'); }

export function fmtDateTime(ms, seconds) {
  const d = new Date(ms);
  if (Number.isNaN(d.getTime())) return '';
  const s = d.getFullYear() + '-' + pad(d.getMonth() + 1) + '-' + pad(d.getDate()) + ' ' + pad(d.getHours()) + ':' + pad(d.getMinutes());
  return seconds ? s + ':' + pad(d.getSeconds()) : s;
}

export function fmtTime(ms) {
  const d = new Date(ms);
  return Number.isNaN(d.getTime()) ? '' : pad(d.getHours()) + ':' + pad(d.getMinutes());
}

export function fmtNum(n) {
  return typeof n === 'number' && Number.isFinite(n) ? new Intl.NumberFormat(S.lang).format(n) : '-';
}

export function fmtDuration(secs) {
  if (typeof secs !== 'number' || !Number.isFinite(secs)) return '-';
  const h = Math.floor(secs / 3600);
  const m = Math.floor((secs % 3600) / 60);
  const s = Math.floor(secs % 60);
  if (h > 0) return t('dur.hm', { h, m: pad(m) });
  if (m > 0) return t('dur.ms', { m, s: pad(s) });
  return t('dur.s', { s });
}

// Keeps the focused control focused across a rebuild of a list (keys in data-fk).
export function keepFocus(container, rebuild) {
  const a = document.activeElement;
  const key = a && container.contains(a) ? a.dataset.fk : null;
  rebuild();
  if (key) {
    for (const e of container.querySelectorAll('[data-fk]')) {
      if (e.dataset.fk === key) { e.focus(); break; }
    }
  }
}
