// The Approvals page, loaded when first opened: commands waiting for approval (approve and
// continue, exactly, by pattern, reject) and plans waiting for review (each task's text
// editable, kept across live redraws; Dispatch, Discard).

import { rowAlert, run, clearAlert, showError } from '/alerts.js';
import { getJson } from '/api.js';
import { $, el, fmtDateTime, keepFocus, nextId } from '/dom.js';
import { t } from '/i18n.js';
import { latest } from '/latest.js';
import { S } from '/store.js';
import { agentName } from '/who.js';

function cmdLine(command, args) {
  const q = (s) => (/^[\w@%+=:,./-]+$/.test(s) ? s : JSON.stringify(s));
  return [command, ...(args || [])].map((s) => q(String(s))).join(' ');
}

const approvalsRead = latest();
export async function loadApprovals() {
  const current = approvalsRead();
  try {
    const a = await getJson('/api/approvals');
    if (!current()) return;
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
