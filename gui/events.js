// The live half of the page: each core event of `/api/events` patches the store and redraws
// what it touches, or asks for a read of the page it changes; a lost stream reads all again.

import { showError } from '/alerts.js';
import { addLocal, asks, endDelta, onDelta, onMessage } from '/chat.js';
import { updateChatControls } from '/chat-log.js';
import { $ } from '/dom.js';
import { t } from '/i18n.js';
import { loadSettings } from '/lazy.js';
import { refreshPage, refreshVillage } from '/refresh.js';
import { renderLive, renderStatusBar } from '/statusbar.js';
import { S } from '/store.js';
import { updateCard } from '/village.js';

function refreshAll() {
  refreshVillage();
  refreshPage(S.page);
  if (S.page === 'settings') loadSettings();
}

function onCore(e) {
  const id = e.agentId;
  const now = performance.now();
  switch (e.type) {
    case 'agentStatusChanged': {
      const a = S.agents.get(id);
      if (a) a.status = e.status;
      S.eventAt.set(id + ':status', now);
      updateCard(id);
      refreshVillage();
      break;
    }
    case 'agentStatsUpdated': {
      const a = S.agents.get(id);
      if (a) {
        const st = Object.assign({}, a.stats || {});
        for (const k of ['uptimeSecs', 'totalTokens', 'promptTokens', 'cachedTokens', 'lastPromptTokens']) if (e[k] !== undefined) st[k] = e[k];
        a.stats = st;
        S.eventAt.set(id + ':stats', now);
        updateCard(id);
      }
      break;
    }
    case 'messageDelta':
      if (e.restart) endDelta(id); // the stream broke and is sent again: its pieces are void
      else onDelta(id, e.text || '');
      break;
    case 'messageSent':
      if (e.message) onMessage(e.message);
      refreshVillage();
      refreshPage('conversations');
      break;
    case 'agentTyping':
      S.typing.set(id, !!e.active);
      S.eventAt.set(id + ':typing', now);
      updateCard(id);
      if (id === S.chatAgent) updateChatControls();
      refreshVillage();
      break;
    case 'toolInvoked': {
      addLocal(id, { kind: 'tool', agentId: id, tool: e.tool, ok: !!e.ok, reason: e.reason, callId: e.callId });
      const a = S.agents.get(id);
      if (a) a.lastTool = { tool: e.tool, ok: !!e.ok };
      S.eventAt.set(id + ':tool', now);
      updateCard(id);
      refreshVillage();
      refreshPage('approvals');
      break;
    }
    case 'questionAsked':
    case 'questionSettled':
      asks(e);
      break;
    case 'dryRunEffect':
      addLocal(id, { ...e, kind: 'dryRun' });
      break;
    case 'turnInterrupted':
      endDelta(id);
      addLocal(id, { kind: 'interrupted', turnSeq: e.turnSeq });
      break;
    case 'agentFailed':
      addLocal(id, { kind: 'failed', error: e.error, code: e.code, fix: e.fix });
      refreshVillage();
      break;
    case 'runApprovalChanged':
      if (S.village) S.village.runApproval = e.mode;
      renderStatusBar();
      break;
    case 'planReviewBypassChanged':
      if (S.village) S.village.planReviewBypass = !!e.enabled;
      renderStatusBar();
      break;
    case 'killSwitchChanged':
      if (S.village) S.village.switch = e.to;
      renderStatusBar();
      refreshVillage();
      break;
    case 'sessionSwitched':
    case 'conversationCleared':
      S.chats.clear();
      S.locals.clear();
      refreshPage('chat');
      refreshPage('conversations');
      refreshVillage();
      break;
    case 'turnRecorded':
      if (id === S.chatAgent) refreshPage('chat');
      refreshVillage();
      refreshPage('approvals');
      refreshPage('conversations');
      break;
    default:
      refreshVillage();
      if (/^plan/.test(e.type || '')) refreshPage('approvals');
  }
}

export function connectEvents() {
  const es = new EventSource('/api/events');
  es.addEventListener('core', (ev) => {
    let e;
    try {
      e = JSON.parse(ev.data);
    } catch {
      showError($('global-alert'), { code: 'GUI_BAD_EVENT', message: t('err.badEvent') });
      return;
    }
    onCore(e);
  });
  es.addEventListener('lagged', refreshAll);
  es.addEventListener('open', () => {
    const was = S.live;
    S.live = 'on';
    renderLive();
    if (was !== 'on' && S.opened) refreshAll();
    S.opened = true;
  });
  es.addEventListener('error', () => {
    S.live = es.readyState === EventSource.CLOSED ? 'off' : 'reconnecting';
    renderLive();
    if (es.readyState === EventSource.CLOSED) {
      showError($('global-alert'), { code: 'GUI_EVENTS_CLOSED', message: t('err.eventsClosed'), fix: t('err.eventsClosedFix') });
    }
  });
}
