// The Log page, loaded when first opened: the last 200 lines of the village's log, read every
// 2 s while the page shows, kept scrolled to the end when it was there.

import { clearAlert, showError } from '/alerts.js';
import { getJson } from '/api.js';
import { $ } from '/dom.js';
import { S } from '/store.js';

const L = { timer: null, first: true }; // the next read's timer; the first read scrolls to the end
async function pollLog() {
  L.timer = null;
  if (S.page !== 'log') return;
  const pre = $('log-text');
  try {
    const r = await getJson('/api/log?lines=200');
    const text = (r?.lines || []).join('\n');
    if (pre.textContent !== text) {
      const nearEnd = pre.scrollHeight - pre.scrollTop - pre.clientHeight < 48;
      pre.textContent = text;
      if (nearEnd || L.first) pre.scrollTop = pre.scrollHeight;
    }
    L.first = false;
    clearAlert($('log-alert'));
  } catch (e) {
    showError($('log-alert'), e);
  }
  if (S.page === 'log' && !L.timer) L.timer = setTimeout(pollLog, 2000);
}

/** The Log page shown: read now (then every 2 s while it shows). */
export function showLog(changed) {
  if (changed || !L.timer) { L.first = true; clearTimeout(L.timer); pollLog(); }
}

/** Another page shown: no more reads. */
export function leaveLog() {
  if (L.timer) {
    clearTimeout(L.timer);
    L.timer = null;
  }
}
