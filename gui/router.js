// Hash routing: `#page/arg` shows one `<section data-page>`, marks its nav link current, sets
// the title, and tells the page (a table of pages set at boot, `setPages`).

import { $ } from '/dom.js';
import { t } from '/i18n.js';
import { S } from '/store.js';

// `pages`: name -> {show(changed, arg), leave()?}; `quietNext`: the next hash change moves no focus.
const R = { pages: {}, quietNext: false };

export function setPages(pages) {
  R.pages = pages;
}

export function go(hash, focus) {
  if (location.hash === hash) route(focus);
  else {
    R.quietNext = !focus;
    location.hash = hash;
  }
}

/** The browser's hashchange: the page named, focused unless `go` asked otherwise. */
export function onHashChange() {
  const q = R.quietNext;
  R.quietNext = false;
  route(!q);
}

export function route(focus) {
  const raw = location.hash.replace(/^#/, '');
  const parts = raw.split('/');
  const page = Object.hasOwn(R.pages, parts[0]) ? parts[0] : 'village';
  let arg = null;
  if (parts.length > 1) {
    try { arg = decodeURIComponent(parts.slice(1).join('/')); } catch { arg = null; }
  }
  const changed = S.page !== page;
  S.page = page;
  for (const sec of document.querySelectorAll('[data-page]')) sec.hidden = sec.dataset.page !== page;
  for (const a of document.querySelectorAll('#nav a[data-route]')) {
    if (a.dataset.route === page) a.setAttribute('aria-current', 'page');
    else a.removeAttribute('aria-current');
  }
  document.title = t('nav.' + page) + ' - ' + t('app.title');
  R.pages[page].show(changed, arg);
  for (const [name, p] of Object.entries(R.pages)) if (name !== page && p.leave) p.leave();
  if (focus) {
    const h = $('h-' + page);
    if (h) h.focus();
  }
}
