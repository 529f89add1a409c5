// The status bar (`contentinfo`): the door, the version, each running request's budget, the
// kill switch and its Halt dialog, the command approval mode, the plan review switch, the live
// state of the event stream and the clock; and the Approvals badge.

import { run } from '/alerts.js';
import { $, fmtDateTime, fmtNum } from '/dom.js';
import { t } from '/i18n.js';
import { S } from '/store.js';

function renderBadge() {
  const n = S.village?.pendingCount || 0;
  const b = $('approvals-badge');
  b.textContent = String(n);
  b.setAttribute('aria-label', t('nav.pending', { n }));
  b.hidden = n === 0;
}

function switchState() {
  const s = S.village?.switch;
  if (!s) return 'running';
  return typeof s === 'string' ? s : s.state || s.to || 'running';
}

export function renderStatusBar() {
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

export function renderLive() {
  $('sb-live').textContent = t('live.' + S.live);
  $('sb-live').className = 'sb-item live-' + S.live;
}

export function tick() {
  const now = Date.now();
  const c = $('sb-clock');
  c.textContent = fmtDateTime(now, true);
  c.setAttribute('datetime', new Date(now).toISOString());
}

export function bindStatusBar() {
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
