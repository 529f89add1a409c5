// Fuseforks web GUI: the entry module. No dependencies, no build step: each page is an ES
// module of its own (gui/README.md names them); the village page's modules load with it, the
// others when first opened. Every server-provided string goes through textContent / text
// nodes, never HTML. The API it uses is docs/gui-api.md.

import { redrawAlerts, run, showError } from '/alerts.js';
import { getJson } from '/api.js';
import { bindChat, loadChat, renderChatAgents, showChat } from '/chat.js';
import { $ } from '/dom.js';
import { connectEvents } from '/events.js';
import { applyStatic, LANG_KEY, storedLang } from '/i18n.js';
import { approvalsPage, castPage, conversationsPage, editors, ifLoaded, loadDict, loadSettings, logPage } from '/lazy.js';
import { renderMap } from '/map.js';
import { setLoaders, refreshVillage } from '/refresh.js';
import { onHashChange, route, setPages } from '/router.js';
import { bindStatusBar, renderLive, renderStatusBar, tick } from '/statusbar.js';
import { S } from '/store.js';
import { applyVillage, loadVillage, renderCards, renderGroups } from '/village.js';

// What each page does when shown (`changed`: it was not the page before; `arg`: `#page/arg`).
const PAGES = {
  village: { show: (changed) => { if (changed) refreshVillage(); } },
  chat: { show: (_changed, arg) => showChat(arg) },
  conversations: { show: () => conversationsPage().then((m) => m.loadConversations()) },
  approvals: { show: () => approvalsPage().then((m) => m.loadApprovals()) },
  servants: { show: () => castPage().then((m) => m.showCast()) },
  files: { show: (changed) => editors().then((m) => (changed ? m.showFiles() : m.relabelFiles())) },
  stats: { show: () => editors().then((m) => m.showStats()) },
  settings: {
    show: (changed) => {
      if (!changed && S.settingsGen === S.gen) return;
      S.settingsGen = S.gen;
      loadSettings();
    },
  },
  log: {
    show: (changed) => logPage().then((m) => m.showLog(changed)),
    leave: () => ifLoaded('log')?.then((m) => m.leaveLog()),
  },
};

// What reads each page's data again (only the page shown is read; refresh.js).
const LOADERS = {
  village: loadVillage,
  chat: loadChat,
  approvals: () => approvalsPage().then((m) => m.loadApprovals()),
  conversations: () => conversationsPage().then((m) => m.loadConversations()),
};

async function setLang(code, persist) {
  const d = await loadDict(code);
  S.dict = d;
  S.lang = code;
  if (persist) {
    try { localStorage.setItem(LANG_KEY, code); } catch { /* private mode: the switch still works for this page */ }
  }
  applyStatic();
  S.gen++;
  redrawAlerts();
  renderAll();
  route(false);
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

async function boot() {
  setPages(PAGES);
  setLoaders(LOADERS);
  const stored = storedLang();
  const dictP = stored ? loadDict(stored).catch(() => ({})) : null;
  let v = null;
  try {
    v = await getJson('/api/village');
  } catch (e) {
    showError($('global-alert'), e);
  }
  S.lang = stored || (v && v.language === 'ja' ? 'ja' : 'en');
  try {
    S.dict = await (dictP || loadDict(S.lang));
  } catch (e) {
    showError($('global-alert'), e);
  }
  applyStatic();
  if (v) applyVillage(v, -1);
  bindStatusBar();
  $('start-batch').addEventListener('click', () => run($('village-alert'), 'startBatch'));
  bindChat();
  $('lang').addEventListener('change', (e) => {
    setLang(e.target.value, true).catch((err) => showError($('global-alert'), err));
  });
  window.addEventListener('hashchange', onHashChange);
  renderAll();
  route(false);
  setInterval(tick, 1000);
  connectEvents();
}

boot();
