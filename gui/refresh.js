// Reading a page's data again, soon and once: each page's loader is registered at boot
// (`setLoaders`); a burst of events or commands becomes one read per page, of the page shown.

import { S } from '/store.js';

const timers = new Map();
const loaders = {};

export function debounce(name, fn, ms = 100) {
  clearTimeout(timers.get(name));
  timers.set(name, setTimeout(fn, ms));
}

export function cancel(name) {
  clearTimeout(timers.get(name));
}

/** `{village, chat, approvals, conversations}`: what reads each one again. */
export function setLoaders(table) {
  Object.assign(loaders, table);
}

export const refreshVillage = () => debounce('village', loaders.village);

// Only the page shown is read again (the others are read when opened).
export function refreshPage(name) {
  if (S.page !== name || !loaders[name]) return;
  debounce(name, loaders[name]);
}

export function refreshSoon() {
  refreshVillage();
  refreshPage('approvals');
  refreshPage('conversations');
}
