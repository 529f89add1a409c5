// The HTTP API of docs/gui-api.md: reads (`getJson`) and commands (`command`); a refusal
// becomes an ApiError with the server's code, words and refused field.

import { t } from '/i18n.js';

export class ApiError extends Error {
  constructor(code, message, fix, field, server) {
    super(message);
    this.code = code;
    this.fix = fix;
    this.field = field; // JSON path of the refused value (docs/gui-api.md)
    this.server = server;
  }
}

async function decode(r) {
  const text = await r.text();
  let body = null;
  try { body = text ? JSON.parse(text) : null; } catch { body = null; }
  if (!r.ok || body?.error) {
    const e = body?.error || {};
    throw new ApiError(e.code || 'HTTP_' + r.status, e.message || r.statusText || t('err.http'), e.fix, e.field, !!e.code);
  }
  return body;
}

async function send(path, init) {
  let r;
  try {
    r = await fetch(path, init);
  } catch {
    throw new ApiError('GUI_NETWORK', t('err.network'), t('err.networkFix'));
  }
  return decode(r);
}

export const getJson = (path) => send(path, { headers: { accept: 'application/json' }, cache: 'no-store' });

export function command(type, fields) {
  return send('/api/commands', {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json' },
    body: JSON.stringify(Object.assign({ type }, fields || {})),
  });
}
