// What the page loads when it is first needed, each once: the dictionaries, the Japanese
// words of the server's codes, pages.css, and the modules of the pages beyond the first load
// (the village page stays small; docs in gui/README.md).

import { showError } from '/alerts.js';
import { getJson } from '/api.js';
import { $, el } from '/dom.js';
import { applyStatic } from '/i18n.js';
import { S } from '/store.js';

const loaded = new Map(); // name -> the promise of its first load

function once(name, load) {
  if (!loaded.has(name)) loaded.set(name, load());
  return loaded.get(name);
}

// A page's module: a failed load says so in the global alert.
function pageModule(name, load) {
  return once(name, () => {
    const p = load();
    p.catch((e) => showError($('global-alert'), e));
    return p;
  });
}

// Japanese words of the server's codes (codes-ja.json), loaded once ja is chosen.
const loadCodes = () => once('codes', () => getJson('/i18n/codes-ja.json').then((d) => { S.codes = d || {}; }, () => {}));

// The first load's words; the Servants, Files and Stats pages' words come with their modules
// (`pages-<lang>.json`, merged in once one of them is first opened, and on a language switch).
export async function loadDict(code, pages = S.pagesWanted) {
  const name = (p) => '/i18n/' + p + (code === 'ja' ? 'ja' : 'en') + '.json';
  const [d, more] = await Promise.all([getJson(name('')), pages ? getJson(name('pages-')) : {}, code === 'ja' && loadCodes()]);
  return Object.assign(d && typeof d === 'object' ? d : {}, more);
}

function pageWords() {
  return once('pageWords', () => {
    S.pagesWanted = true;
    return loadDict(S.lang, true).then((d) => { S.dict = d; applyStatic(); });
  });
}

// The styles of the pages loaded on first use, linked once.
function pagesStyle() {
  if (document.getElementById('pages-css')) return;
  document.head.append(el('link', { rel: 'stylesheet', href: '/pages.css', id: 'pages-css' }));
}

/** question.js: a question a turn waits on (ask_user), loaded at the first one. */
export const questionModule = () => once('question', () => {
  pagesStyle();
  return pageWords().then(() => import('/question.js'));
});

/** The Files and Stats pages' module. */
export const editors = () => pageModule('editors', () => {
  pagesStyle();
  return pageWords().then(() => import('/editors.js')).then((m) => {
    m.bindEditors();
    return m;
  });
});

/** The Servants page's module. */
export const castPage = () => pageModule('cast', () => {
  pagesStyle();
  return pageWords().then(() => import('/cast.js')).then((m) => {
    m.bindCast();
    return m;
  });
});

/** The Settings page read (its module loaded the first time). */
export function loadSettings() {
  const settings = pageModule('settings', () => import('/settings.js').then((m) => {
    m.bindSettings();
    return m;
  }));
  return settings.then((m) => m.loadSettings());
}

export const approvalsPage = () => pageModule('approvals', () => import('/approvals.js'));
export const logPage = () => pageModule('log', () => import('/log.js'));
export const conversationsPage = () => pageModule('conversations', () => import('/conversations.js').then((m) => {
  m.bindConversations();
  return m;
}));

/** The module `name` if it was loaded (or is loading), else null. */
export const ifLoaded = (name) => loaded.get(name) || null;
