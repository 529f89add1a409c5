// The page's words: `t` reads the dictionary in the store (`{name}` placeholders filled), and
// the shell's own elements take the words of their data-i18n keys.

import { S } from '/store.js';

export const LANG_KEY = 'fuseforks.lang';

const has = (k) => Object.hasOwn(S.dict, k);

export function t(key, vars) {
  let s = has(key) ? S.dict[key] : key;
  if (vars) for (const k of Object.keys(vars)) s = s.split('{' + k + '}').join(String(vars[k]));
  return s;
}

export function storedLang() {
  try {
    const v = localStorage.getItem(LANG_KEY);
    return v === 'ja' || v === 'en' ? v : null;
  } catch {
    return null;
  }
}

export function applyStatic() {
  document.documentElement.lang = S.lang;
  // A word not loaded yet (a later page's) leaves the element's own English as it is.
  for (const e of document.querySelectorAll('[data-i18n]')) if (has(e.dataset.i18n)) e.textContent = t(e.dataset.i18n);
  for (const e of document.querySelectorAll('[data-i18n-aria]')) if (has(e.dataset.i18nAria)) e.setAttribute('aria-label', t(e.dataset.i18nAria));
  document.getElementById('lang').value = S.lang;
}
