// Fuseforks web GUI: the Settings page (the secret store, each model template's key, the door,
// the village's limits), loaded when the page is first opened (lazy.js).

import { clearAlert, marked, rowAlert, run, showError } from '/alerts.js';
import { getJson } from '/api.js';
import { $, el, fact, keepFocus, nextId } from '/dom.js';
import { t } from '/i18n.js';

export function bindSettings() {
  bindForms();
}

export async function loadSettings() {
  try {
    const s = await getJson('/api/settings');
    renderSettings(s);
    clearAlert($('settings-alert'));
  } catch (e) {
    showError($('settings-alert'), e);
  }
}

function renderSettings(s) {
  $('secret-store').textContent = t('settings.store', { store: s.secretStore || '-' });
  const box = $('templates');
  keepFocus(box, () => box.replaceChildren(...(s.templates || []).map(drawTemplate)));
  const door = s.door || {};
  // A field marked wrong keeps what was typed.
  const put = (id, v) => { if (!marked.has($(id))) $(id).value = v == null ? '' : String(v); };
  $('door-enabled').checked = !!door.enabled;
  put('door-port', door.port);
  $('door-token').textContent = t(door.hasToken ? 'settings.doorToken' : 'settings.doorNoToken');
  put('token-budget', s.tokenBudget);
  put('ask-timeout', s.askTimeoutSecs);
}

function drawTemplate(tp) {
  const hid = nextId('tpl-h');
  const iid = nextId('key');
  const dl = el('dl', { class: 'facts' });
  fact(dl, t('card.id')).textContent = tp.id;
  fact(dl, t('settings.provider')).textContent = tp.provider || '-';
  fact(dl, t('settings.model')).textContent = tp.model || '-';
  fact(dl, t('settings.baseUrl')).textContent = tp.baseUrl || '-';
  fact(dl, t('settings.credential')).textContent = tp.credential || '-';
  const keyState = fact(dl, t('settings.key'));
  let has = !!tp.hasKey;
  const showKey = () => { keyState.textContent = t(has ? 'settings.hasKey' : 'settings.noKey'); };
  showKey();
  const input = el('input', { type: 'password', id: iid, autocomplete: 'off', spellcheck: 'false', required: true, 'data-field': 'value', 'data-fk': 'k:' + tp.id });
  const alertBox = rowAlert('tpl:' + tp.id);
  const status = el('p', { class: 'ok-note', role: 'status' });
  const form = el('form', { class: 'key-form', novalidate: true },
    el('label', { for: iid, text: t('settings.apiKey', { id: tp.id }) }), input,
    el('div', { class: 'actions' },
      el('button', { type: 'submit', class: 'primary', 'data-fk': 's:' + tp.id, text: t('settings.saveKey') }),
      el('button', {
        type: 'button', class: 'danger', 'data-fk': 'd:' + tp.id, text: t('settings.deleteKey'),
        onclick: async () => {
          const ok = await run(alertBox, 'deleteApiKey', { templateId: tp.id }, status, t('settings.keyDeleted'));
          if (ok) { has = false; showKey(); }
        },
      })),
    alertBox, status);
  form.addEventListener('submit', async (e) => {
    e.preventDefault();
    const ok = await run(alertBox, 'setApiKey', { templateId: tp.id, value: input.value }, status, t('settings.keySaved'), form);
    if (ok) { input.value = ''; has = true; showKey(); }
  });
  return el('article', { class: 'card', 'aria-labelledby': hid },
    el('h3', { id: hid, text: tp.name && tp.name !== tp.id ? tp.name + ' (' + tp.id + ')' : tp.id }), dl, form);
}

const numOrNull = (input) => (input.value.trim() === '' ? null : Number(input.value));

function bindForms() {
  $('door-form').addEventListener('submit', (e) => {
    e.preventDefault();
    run($('door-alert'), 'setDoor', { enabled: $('door-enabled').checked, port: numOrNull($('door-port')) }, $('door-status'), t('settings.saved'), $('door-form'))
      .then((ok) => { if (ok) loadSettings(); });
  });
  $('limits-form').addEventListener('submit', (e) => {
    e.preventDefault();
    run($('limits-alert'), 'setVillageLimits', { tokenBudget: numOrNull($('token-budget')), askTimeoutSecs: numOrNull($('ask-timeout')) }, $('limits-status'), t('settings.saved'), $('limits-form'));
  });
}
