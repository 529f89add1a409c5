// Fuseforks web GUI: the Servants page — create a servant, rename, delete (confirmed; its
// folder goes to the trash), connect and disconnect (only a person draws an edge), its work
// folder, tools, tool rounds and group; the judges apart, with their switch and "Try".
// Loaded when the page first opens (lazy.js).

import { checkFields, clearAlert, flash, placeFieldError, showError } from '/alerts.js';
import { command, getJson } from '/api.js';
import { $, el } from '/dom.js';
import { t } from '/i18n.js';

// `cast`: the last `/api/cast`; `deleting`: the servant whose delete the dialog confirms.
const K = { cast: { servants: [], judges: [], roles: [], groups: [], tools: [] }, deleting: null };

export function bindCast() {
  $('cast-create').addEventListener('submit', (e) => { e.preventDefault(); create(); });
  $('cast-delete-confirm').addEventListener('click', confirmDelete);
  $('cast-delete-cancel').addEventListener('click', () => $('cast-delete-dialog').close());
}

export async function showCast() {
  try {
    K.cast = await getJson('/api/cast');
    clearAlert($('cast-alert'));
  } catch (e) {
    showError($('cast-alert'), e);
    return;
  }
  render();
}

// One cast edit; with a `scope`, its fields are checked first (nothing sent while one is wrong)
// and a field the server refuses is marked there.
async function edit(alertBox, fields, okText, statusBox, scope) {
  if (scope && !checkFields(scope)) return false;
  try {
    await command('cast', { edit: fields });
    clearAlert(alertBox);
    if (statusBox && okText) flash(statusBox, okText);
    await showCast();
    return true;
  } catch (e) {
    showError(alertBox, e);
    placeFieldError(scope, e);
    return false;
  }
}

async function create() {
  const agentId = $('cast-new-id').value.trim();
  const name = $('cast-new-name').value.trim();
  const roleId = $('cast-new-role').value || null;
  if (await edit($('cast-alert'), { op: 'create', agentId, name, roleId }, t('cast.created', { name }), $('cast-status'), $('cast-create'))) {
    $('cast-new-id').value = '';
    $('cast-new-name').value = '';
  }
}

function render() {
  $('cast-new-role').replaceChildren(el('option', { value: '', text: t('cast.noRole') }),
    ...K.cast.roles.map((r) => el('option', { value: r.id, text: r.name })));
  $('cast-list').replaceChildren(...K.cast.servants.map(servantRow));
  $('cast-judges').replaceChildren(...K.cast.judges.map(judgeRow));
  $('cast-judges-empty').hidden = K.cast.judges.length > 0;
}

function field(label, input) {
  return el('label', { class: 'field' }, el('span', { text: label }), ' ', input);
}

function servantRow(s) {
  const alertBox = el('p', { class: 'alert', role: 'alert', hidden: true });
  const status = el('span', { class: 'ok-note', role: 'status' });
  const name = el('input', { type: 'text', required: true, 'data-field': 'edit.name', value: s.name, 'aria-label': t('cast.nameOf', { id: s.id }) });
  const rename = el('button', { type: 'button', text: t('cast.rename'), onclick: () => edit(alertBox, { op: 'rename', agentId: s.id, name: name.value }, t('cast.saved'), status, naming) });
  const work = el('input', { type: 'text', 'data-field': 'edit.settings.workDir', value: s.workDir || '', 'aria-label': t('cast.workDir') });
  const tools = el('input', { type: 'text', 'data-field': 'edit.settings.enabledTools', value: (s.enabledTools || []).join(', '), 'aria-label': t('cast.tools'), placeholder: t('cast.toolsDefault') });
  const rounds = el('input', { type: 'number', min: 1, max: 255, step: 1, 'data-field': 'edit.settings.maxToolIterations', value: s.maxToolIterations || '', 'aria-label': t('cast.rounds') });
  const group = el('select', { 'data-field': 'edit.settings.groupId', 'aria-label': t('cast.group') }, el('option', { value: '', text: t('cast.noGroup') }),
    ...K.cast.groups.map((g) => el('option', { value: g.id, text: g.name })));
  group.value = s.groupId || '';
  const save = el('button', { type: 'button', text: t('cast.saveSettings'), onclick: () => {
    const list = tools.value.split(',').map((x) => x.trim()).filter(Boolean);
    const settings = {
      workDir: work.value.trim() || null,
      enabledTools: list.length ? list : null,
      maxToolIterations: rounds.value ? Number(rounds.value) : null,
      groupId: group.value || null,
    };
    edit(alertBox, { op: 'settings', agentId: s.id, settings }, t('cast.saved'), status, settingsBar);
  } });
  const edges = el('ul', { class: 'edges', 'aria-label': t('cast.connectedOf', { name: s.name }) },
    ...s.connected.map((to) => el('li', null, el('span', { text: nameOf(to) + ' ' }),
      el('button', { type: 'button', text: t('cast.disconnect', { name: nameOf(to) }), onclick: () => edit(alertBox, { op: 'connect', from: s.id, to, connected: false }) }))));
  const others = K.cast.servants.filter((o) => o.id !== s.id && !s.connected.includes(o.id)).map((o) => ({ id: o.id, name: o.name }))
    .concat(K.cast.judges.filter((j) => !s.connected.includes(j.id)).map((j) => ({ id: j.id, name: j.name })));
  const target = el('select', { 'aria-label': t('cast.connectTo') }, ...others.map((o) => el('option', { value: o.id, text: o.name })));
  const connect = el('button', { type: 'button', text: t('cast.connect'), disabled: others.length === 0, onclick: () => edit(alertBox, { op: 'connect', from: s.id, to: target.value, connected: true }) });
  const del = el('button', { type: 'button', class: 'danger', text: t('cast.delete'), onclick: () => askDelete(s) });
  // Each toolbar is the scope its button checks (the closures above read them when clicked).
  const naming = el('div', { class: 'toolbar' }, name, rename, del, status);
  const settingsBar = el('div', { class: 'toolbar' }, field(t('cast.workDir'), work), field(t('cast.tools'), tools), field(t('cast.rounds'), rounds), field(t('cast.group'), group), save);
  return el('article', { class: 'cast-row', 'aria-label': s.name },
    el('h3', { text: s.name + ' (' + s.id + ')' }),
    naming,
    settingsBar,
    el('h4', { text: t('cast.connected') }), edges,
    el('div', { class: 'toolbar' }, target, connect),
    alertBox);
}

function nameOf(id) {
  const s = K.cast.servants.find((x) => x.id === id) || K.cast.judges.find((x) => x.id === id);
  return s ? s.name : id;
}

// What will still name the servant once it is deleted (schedule tasks, judge routes), or ''.
function leftBehind(named) {
  const parts = [];
  if (named?.schedules.length) parts.push(t('cast.leftSchedules', { ids: named.schedules.join(', ') }));
  if (named?.judges.length) parts.push(t('cast.leftJudges', { ids: named.judges.map(nameOf).join(', ') }));
  return parts.join(' ');
}

function askDelete(s) {
  K.deleting = s;
  $('cast-delete-h').textContent = t('cast.deleteQ', { name: s.name });
  const left = leftBehind(s.namedBy);
  $('cast-delete-left').hidden = !left;
  $('cast-delete-left').textContent = left;
  $('cast-delete-dialog').showModal();
}

async function confirmDelete() {
  $('cast-delete-dialog').close();
  if (!K.deleting) return;
  const s = K.deleting;
  K.deleting = null;
  const said = [t('cast.deleted', { name: s.name }), leftBehind(s.namedBy)].filter(Boolean).join(' ');
  await edit($('cast-alert'), { op: 'delete', agentId: s.id }, said, $('cast-status'));
}

function judgeRow(j) {
  const alertBox = el('p', { class: 'alert', role: 'alert', hidden: true });
  const on = el('input', { type: 'checkbox', checked: j.enabled, onchange: () => edit(alertBox, { op: 'judgeEnabled', judgeId: j.id, enabled: on.checked }) });
  const text = el('input', { type: 'text', 'aria-label': t('cast.tryText', { name: j.name }) });
  const result = el('p', { class: 'hint', role: 'status' });
  const tryIt = el('button', { type: 'button', text: t('cast.try'), onclick: async () => {
    result.textContent = t('assist.waiting');
    try {
      const r = await command('tryJudge', { judgeId: j.id, text: text.value });
      clearAlert(alertBox);
      result.textContent = r.outcome === 'undecided' || r.outcome === 'invalid'
        ? t('cast.undecided', { reason: r.reason || r.outcome, detail: r.detail || '' })
        : t('cast.decided', { outcome: r.outcome, rule: r.rule, answers: r.answers || '' });
    } catch (e) {
      result.textContent = '';
      showError(alertBox, e);
    }
  } });
  return el('article', { class: 'cast-row', 'aria-label': j.name },
    el('h3', { text: j.name + ' (' + j.id + ')' }),
    el('label', { class: 'check' }, on, ' ', el('span', { text: t('cast.enabled') })),
    el('div', { class: 'toolbar' }, text, tryIt), result, alertBox);
}
