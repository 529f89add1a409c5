// Fuseforks web GUI: the questions turns wait on (`ask_user`, docs/gui-api.md) — each a chat
// row with the question, a button per choice and an answer box, answered with
// `answerQuestion`; once settled, what was answered, or that the turn stopped waiting.
// Loaded at the first question (`questionAsked`, or `GET /api/questions`; lazy.js); the chat's
// own calls come with each one.

import { run } from '/alerts.js';
import { el, nextId } from '/dom.js';
import { t } from '/i18n.js';
import { S } from '/store.js';
import { agentName } from '/who.js';

const chat = {}; // chat.js's addLocal and renderChat (it imports this module, so not the reverse)

/** A `questionAsked` / `questionSettled` event, or `{list}`: the questions waiting now. */
export function on(e, calls) {
  Object.assign(chat, calls);
  if (e.list) e.list.forEach(show);
  else if (e.type === 'questionAsked') show(e.question);
  else settle(e.questionId, !!e.answered);
}

function show(q) {
  if (!q?.questionId) return;
  const list = S.locals.get(q.agentId) || [];
  if (list.some((r) => r.kind === 'question' && r.q.questionId === q.questionId)) return;
  chat.addLocal(q.agentId, { kind: 'question', q, state: 'open', ver: 0, draw });
}

function settle(questionId, answered, answer) {
  for (const [agentId, list] of S.locals) {
    for (const r of list) {
      if (r.kind !== 'question' || r.q.questionId !== questionId) continue;
      // The event may come before the command's own answer: the text is kept either way.
      if (r.state === 'open') r.state = answered ? 'answered' : 'withdrawn';
      else if (answer === undefined) continue;
      if (answer !== undefined) r.answer = answer;
      r.ver++;
      if (S.page === 'chat' && S.chatAgent === agentId) chat.renderChat();
    }
  }
}

function draw(it) {
  const q = it.q;
  const hid = nextId('question');
  const box = el('div', { class: 'msg msg-agent question', role: 'group', 'aria-labelledby': hid },
    el('div', { class: 'meta' }, el('span', { id: hid, class: 'who', text: t('chat.asks', { name: agentName(q.agentId) }) })),
    el('div', { class: 'text', text: q.question }));
  if (it.state !== 'open') {
    const said = it.state === 'answered' ? t('chat.answered') + (it.answer ? ' ' + it.answer : '') : t('chat.withdrawn');
    box.append(el('p', { class: 'hint', role: 'status', text: said }));
    return box;
  }
  const alert = el('p', { class: 'alert', role: 'alert', hidden: true });
  const answer = async (text) => {
    if (!text.trim()) return;
    const ok = await run(alert, 'answerQuestion', { questionId: q.questionId, answer: text });
    if (ok) settle(q.questionId, true, text);
  };
  if (q.choices?.length) {
    const row = el('div', { class: 'choices' });
    for (const c of q.choices) row.append(el('button', { type: 'button', onclick: () => answer(c), text: c }));
    box.append(row);
  }
  const fid = nextId('answer');
  const ta = el('textarea', { id: fid, rows: 2 });
  const form = el('form', { class: 'answer', onsubmit: (e) => { e.preventDefault(); answer(ta.value); } },
    el('label', { for: fid, text: t('chat.yourAnswer') }), ta,
    el('button', { type: 'submit', class: 'primary', text: t('chat.answer') }));
  box.append(form, alert);
  return box;
}
