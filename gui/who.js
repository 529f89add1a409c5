// Who sent a message or is named by a row, in words: an agent by its name, the user, the
// system, an external client.

import { t } from '/i18n.js';
import { S } from '/store.js';

export function agentName(id) {
  const a = S.agents.get(id);
  return a?.name ? a.name : id;
}

// Endpoints come as "user" / "agent:ID" strings (reads) or {kind:"agent", id} objects (events).
export function endpoint(e) {
  if (typeof e === 'string') {
    const i = e.indexOf(':');
    const kind = i < 0 ? e : e.slice(0, i);
    const rest = i < 0 ? '' : e.slice(i + 1);
    if (kind === 'agent') return { kind, id: rest };
    if (kind === 'external') return { kind, client: rest };
    return { kind };
  }
  if (e && typeof e === 'object') {
    const kind = e.kind || e.type;
    return { kind, id: e.id, client: e.client };
  }
  return { kind: 'unknown' };
}

export function endpointName(ep) {
  if (ep.kind === 'user') return t('who.you');
  if (ep.kind === 'system') return t('who.system');
  if (ep.kind === 'agent') return agentName(ep.id);
  if (ep.kind === 'external') return t('who.external', { name: ep.client || '?' });
  return '?';
}
