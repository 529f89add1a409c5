// Fuseforks web GUI: the Files page's code view. The textarea stays the one editable, accessible
// control; behind it a mirror draws the same text coloured by its kind (JSON, TOML, Markdown),
// each line with a problem banded and the problem's column underlined, the bracket matching
// the one at the caret marked; Enter keeps the line's indentation; every edit the page makes
// goes through the browser's own undo history; Find selects the next match. Text goes in
// through text nodes only. No dependencies.

/** The kind of a file path, for colouring. */
export function kindOf(path) {
  if (/\.json$/.test(path)) return 'json';
  if (/\.toml$/.test(path)) return 'toml';
  return 'md';
}

const RULES = {
  json: [
    [/^"(?:[^"\\]|\\.)*"(?=\s*:)/, 'key'],
    [/^"(?:[^"\\]|\\.)*"?/, 'str'],
    [/^-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?/, 'num'],
    [/^(?:true|false|null)\b/, 'kw'],
    [/^[{}[\],:]/, 'punct'],
  ],
  toml: [
    [/^#.*/, 'comment'],
    [/^\[\[?[^\]]*\]\]?/, 'head'],
    [/^[A-Za-z0-9_.-]+(?=\s*=)/, 'key'],
    [/^"""[\s\S]*?(?:"""|$)/, 'str'],
    [/^"(?:[^"\\]|\\.)*"?/, 'str'],
    [/^'[^']*'?/, 'str'],
    [/^-?\d+(?:\.\d+)?/, 'num'],
    [/^(?:true|false)\b/, 'kw'],
    [/^[{}[\],=]/, 'punct'],
  ],
  md: [
    [/^#{1,6}\s.*/, 'head'],
    [/^\s*(?:[-*+]|\d+\.)\s/, 'punct'],
    [/^`[^`]*`?/, 'str'],
    [/^\*\*[^*]+\*\*/, 'kw'],
    [/^\$\{secret:[^}]*\}/, 'kw'],
  ],
};

// A line's tokens: [text, class] pairs (class '' for plain text).
function tokens(line, kind) {
  const rules = RULES[kind] || [];
  const out = [];
  let plain = '';
  let rest = line;
  let atStart = true;
  while (rest.length) {
    let hit = null;
    for (const [re, cls] of rules) {
      if (kind === 'md' && (cls === 'head' || cls === 'punct') && !atStart) continue;
      const m = re.exec(rest);
      if (m && m[0].length) { hit = [m[0], cls]; break; }
    }
    if (hit) {
      if (plain) { out.push([plain, '']); plain = ''; }
      out.push(hit);
      rest = rest.slice(hit[0].length);
    } else {
      plain += rest[0];
      rest = rest.slice(1);
    }
    atStart = false;
  }
  if (plain) out.push([plain, '']);
  return out;
}

// The spans of one line; `marks` maps 1-based columns to an extra class ('err-at', 'match').
function lineSpans(line, kind, marks) {
  const kids = [];
  let at = 1;
  for (const [text, cls] of tokens(line, kind)) {
    let from = 0;
    for (let i = 0; i < text.length; i++) {
      const extra = marks && marks.get(at + i);
      if (!extra) continue;
      if (i > from) kids.push(span(text.slice(from, i), cls));
      kids.push(span(text[i], (cls ? cls + ' ' : '') + extra));
      from = i + 1;
    }
    if (from < text.length) kids.push(span(text.slice(from), cls));
    at += text.length;
  }
  for (const [c, extra] of marks || []) if (c >= at) kids.push(span(' ', extra));
  return kids;
}

const PAIRS = { '(': ')', '[': ']', '{': '}' };
const CLOSERS = { ')': '(', ']': '[', '}': '{' };

/** The offsets of the bracket at (or just before) `caret` and its match, or null. */
export function matchAt(text, caret) {
  for (const at of [caret, caret - 1]) {
    const ch = text[at];
    if (PAIRS[ch]) return scan(text, at, ch, PAIRS[ch], 1);
    if (CLOSERS[ch]) return scan(text, at, ch, CLOSERS[ch], -1);
  }
  return null;
}

function scan(text, at, open, close, step) {
  let depth = 0;
  for (let i = at; i >= 0 && i < text.length && Math.abs(i - at) < 200000; i += step) {
    if (text[i] === open) depth++;
    else if (text[i] === close && --depth === 0) return [at, i];
  }
  return null;
}

// 1-based (line, column) of an offset.
function place(text, offset) {
  const before = text.slice(0, offset);
  const line = before.split('\n').length;
  return [line, offset - before.lastIndexOf('\n')];
}

function span(text, cls) {
  const e = document.createElement('span');
  if (cls) e.className = 'tk ' + cls;
  e.textContent = text;
  return e;
}

/** Draws `text` into `mirror`, banding the lines of `findings` ({line, col}) and marking the
 * brackets of `pair` (two offsets). */
export function paint(mirror, text, kind, findings, pair) {
  const marks = new Map(); // line -> Map(col -> class)
  const mark = (line, col, cls) => {
    if (!marks.has(line)) marks.set(line, new Map());
    if (!marks.get(line).has(col)) marks.get(line).set(col, cls);
  };
  const bad = new Set();
  for (const f of findings || []) {
    if (bad.has(f.line)) continue;
    bad.add(f.line);
    mark(f.line, f.col, 'err-at');
  }
  for (const offset of pair || []) mark(...place(text, offset), 'match');
  const kids = text.split('\n').map((line, i) => {
    const e = document.createElement('span');
    e.className = bad.has(i + 1) ? 'ln err' : 'ln';
    e.append(...lineSpans(line, kind, marks.get(i + 1)));
    e.append('\n');
    return e;
  });
  mirror.replaceChildren(...kids);
}

/** Puts `text` in place of the selection (all of it with `all`) so that Ctrl+Z undoes it. */
export function insert(area, text, all) {
  const had = document.activeElement;
  area.focus();
  if (all) area.select();
  // The browser's own history keeps an insertText; a value assignment would clear it.
  if (!document.execCommand || !document.execCommand('insertText', false, text)) {
    const s = all ? 0 : area.selectionStart;
    const e = all ? area.value.length : area.selectionEnd;
    area.setRangeText(text, s, e, 'end');
  }
  if (all && had && had !== area && had.focus) had.focus(); // a form's field keeps the focus
}

/** Selects the next match of `needle` after the caret (wrapping); false when there is none. */
export function findNext(area, needle) {
  if (!needle) return false;
  const text = area.value;
  let at = text.indexOf(needle, area.selectionEnd);
  if (at < 0) at = text.indexOf(needle);
  if (at < 0) return false;
  area.focus();
  area.setSelectionRange(at, at + needle.length);
  const line = text.slice(0, at).split('\n').length;
  area.scrollTop = Math.max(0, (line - 5) * parseFloat(getComputedStyle(area).lineHeight || '19'));
  return true;
}

/** Binds the keys of a code textarea: Enter keeps the current line's indentation. */
export function bindKeys(area, onChange) {
  area.addEventListener('keydown', (e) => {
    if (e.key !== 'Enter' || e.shiftKey || e.ctrlKey || e.metaKey || e.altKey || e.isComposing) return;
    const { selectionStart: s, selectionEnd: end, value } = area;
    const lineStart = value.lastIndexOf('\n', s - 1) + 1;
    const indent = /^[ \t]*/.exec(value.slice(lineStart, s))[0];
    if (!indent) return;
    e.preventDefault();
    area.setSelectionRange(s, end);
    insert(area, '\n' + indent, false);
    onChange();
  });
}
