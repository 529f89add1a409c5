// The connection map on the village page: an SVG of the servants (circles) and judges
// (diamonds) with their edges; a node moves by drag or arrow keys and is saved by
// `setPosition` when dropped (one save in flight per node, the latest place last).

import { run } from '/alerts.js';
import { $, keepFocus, svg } from '/dom.js';
import { t } from '/i18n.js';
import { debounce } from '/refresh.js';
import { S } from '/store.js';

const NODE_R = 22;
const MAP_PAD = 60;
const ARROWS = { ArrowLeft: [-1, 0], ArrowRight: [1, 0], ArrowUp: [0, -1], ArrowDown: [0, 1] };
const mapPos = new Map(); // id -> {x, y} as drawn (the server's, or the user's not yet read back)
const mapRefs = { svg: null, nodes: new Map(), edges: [] };
const held = { drag: null }; // the node being dragged: {id, pid, dx, dy, moved}
const mapMoved = new Set(); // nodes moved here since their last save began

function mapSize() {
  const m = S.village?.map || {};
  return [m.width > 0 ? m.width : 800, m.height > 0 ? m.height : 500];
}

export function renderMap() {
  const m = S.village?.map || {};
  const nodes = m.nodes || [];
  const edges = m.edges || [];
  const [w, h] = mapSize();
  $('map-sec').hidden = nodes.length === 0;
  const sig = [w, h, S.gen, ...nodes.map((n) => n.id + '\t' + n.name + '\t' + n.kind), ...edges.map((e) => e.from + '>' + e.to)].join('\n');
  const box = $('map-box');
  if (box.dataset.sig !== sig) {
    keepFocus(box, () => box.replaceChildren(buildMap(nodes, edges, w, h)));
    box.dataset.sig = sig;
  }
  placeMap();
}

function buildMap(nodes, edges, w, h) {
  const root = svg('svg', { class: 'map', viewBox: [-MAP_PAD, -MAP_PAD, w + 2 * MAP_PAD, h + 2 * MAP_PAD].join(' '), role: 'img', 'aria-label': t('map.title') });
  const title = svg('title', {});
  title.textContent = t('map.title');
  const marker = svg('marker', { id: 'map-arrow', viewBox: '0 0 10 10', refX: 9, refY: 5, markerWidth: 7, markerHeight: 7, orient: 'auto' });
  marker.append(svg('path', { class: 'map-arrowhead', d: 'M0 0L10 5L0 10z' }));
  const defs = svg('defs', {});
  defs.append(marker);
  const lines = svg('g', { class: 'map-edges' });
  const known = new Set(nodes.map((n) => n.id));
  mapRefs.edges = [];
  for (const e of edges) {
    if (!known.has(e.from) || !known.has(e.to) || e.from === e.to) continue;
    const line = svg('line', { class: 'map-edge', 'marker-end': 'url(#map-arrow)' });
    lines.append(line);
    mapRefs.edges.push({ from: e.from, to: e.to, line });
  }
  const group = svg('g', { class: 'map-nodes' });
  mapRefs.nodes.clear();
  for (const n of nodes) {
    const g = buildNode(n, root);
    group.append(g);
    mapRefs.nodes.set(n.id, g);
  }
  root.append(title, defs, lines, group);
  mapRefs.svg = root;
  return root;
}

function buildNode(n, root) {
  const judge = n.kind === 'judge';
  const id = n.id;
  const g = svg('g', {
    class: 'map-node ' + (judge ? 'map-judge' : 'map-servant'), tabindex: 0, role: 'button',
    'aria-label': n.name || id, 'aria-describedby': judge ? 'map-judge map-hint' : 'map-hint', 'data-fk': 'node:' + id,
  });
  g.append(judge
    ? svg('rect', { class: 'map-shape', x: -19, y: -19, width: 38, height: 38, transform: 'rotate(45)' })
    : svg('circle', { class: 'map-shape', r: NODE_R }));
  const label = svg('text', { class: 'map-label', y: NODE_R + 16, 'text-anchor': 'middle' });
  label.textContent = n.name || id;
  g.append(label);
  g.addEventListener('keydown', (e) => {
    const d = ARROWS[e.key];
    if (!d || e.altKey || e.ctrlKey || e.metaKey) return;
    e.preventDefault();
    const step = e.shiftKey ? 50 : 10;
    const p = mapPos.get(id) || { x: 0, y: 0 };
    moveNode(id, p.x + d[0] * step, p.y + d[1] * step);
    // Saved after a pause too: a redraw of the map between key down and key up (a live
    // update) would take the key up, and the move, with it.
    debounce('pos-save:' + id, () => savePos(id), 300);
  });
  g.addEventListener('keyup', (e) => { if (ARROWS[e.key]) savePos(id); });
  const toMap = (e) => {
    const ctm = root.getScreenCTM();
    return ctm ? new DOMPoint(e.clientX, e.clientY).matrixTransform(ctm.inverse()) : null;
  };
  g.addEventListener('pointerdown', (e) => {
    if (e.button !== 0) return;
    const p = toMap(e);
    const at = mapPos.get(id);
    if (!p || !at) return;
    e.preventDefault();
    g.focus();
    held.drag = { id, pid: e.pointerId, dx: at.x - p.x, dy: at.y - p.y, moved: false };
    g.setPointerCapture(e.pointerId);
    g.classList.add('map-dragging');
  });
  g.addEventListener('pointermove', (e) => {
    if (!held.drag || held.drag.id !== id || held.drag.pid !== e.pointerId) return;
    const p = toMap(e);
    if (!p) return;
    held.drag.moved = true;
    moveNode(id, p.x + held.drag.dx, p.y + held.drag.dy);
  });
  const end = () => {
    if (!held.drag || held.drag.id !== id) return;
    const moved = held.drag.moved;
    held.drag = null;
    g.classList.remove('map-dragging');
    if (moved) savePos(id);
  };
  for (const ev of ['pointerup', 'pointercancel', 'lostpointercapture']) g.addEventListener(ev, end);
  return g;
}

function moveNode(id, x, y) {
  const [w, h] = mapSize();
  const clamp = (v, hi) => Math.round(Math.min(hi, Math.max(0, v)));
  mapPos.set(id, { x: clamp(x, w), y: clamp(y, h) });
  mapMoved.add(id);
  S.eventAt.set('pos:' + id, performance.now());
  placeMap();
}

export function placeMap() {
  for (const [id, g] of mapRefs.nodes) {
    const p = mapPos.get(id);
    if (p) g.setAttribute('transform', 'translate(' + p.x + ' ' + p.y + ')');
  }
  for (const e of mapRefs.edges) {
    const a = mapPos.get(e.from);
    const b = mapPos.get(e.to);
    if (!a || !b) continue;
    const dx = b.x - a.x;
    const dy = b.y - a.y;
    const d = Math.hypot(dx, dy);
    const k = d > 2 * NODE_R + 4 ? 1 : 0;
    const s0 = k * (NODE_R + 2) / (d || 1);
    const s1 = k * (NODE_R + 4) / (d || 1);
    const at = { x1: a.x + dx * s0, y1: a.y + dy * s0, x2: b.x - dx * s1, y2: b.y - dy * s1 };
    if (!k) Object.assign(at, { x2: at.x1, y2: at.y1 });
    for (const key of Object.keys(at)) e.line.setAttribute(key, at[key].toFixed(1));
  }
}

// One save in flight per node; moves made meanwhile are saved after it, the latest only.
const mapSaving = new Map();
async function savePos(id) {
  if (mapSaving.has(id)) { mapSaving.set(id, 'again'); return; }
  mapSaving.set(id, 'busy');
  for (;;) {
    const p = mapPos.get(id);
    if (!p) break;
    mapMoved.delete(id);
    await run($('map-alert'), 'setPosition', { agentId: id, x: p.x, y: p.y });
    S.eventAt.set('pos:' + id, performance.now());
    if (mapSaving.get(id) !== 'again') break;
    mapSaving.set(id, 'busy');
  }
  mapSaving.delete(id);
}

/** Takes the server's places of the map's nodes, except those moved here and not yet saved. */
export function takePositions(nodes, fresh) {
  for (const n of nodes) {
    // A place moved here and not saved yet (or being saved) is newer than any answer.
    const mine = held.drag?.id === n.id || mapMoved.has(n.id) || mapSaving.has(n.id);
    if (!mine && !(mapPos.has(n.id) && fresh('pos:' + n.id))) mapPos.set(n.id, { x: n.x, y: n.y });
  }
}
