// Fuseforks web GUI: the Files page's code view. The textarea stays the one editable, accessible
// control; behind it a mirror draws the same text coloured by its kind (JSON, TOML, Markdown),
// each line with a problem banded and the problem's column underlined, and Enter keeps the
// line's indentation. Text goes in through text nodes only. No dependencies.

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

// The spans of one line, with the character at `col` (1-based) marked when given.
function lineSpans(line, kind, col) {
  const kids = [];
  let at = 1;
  for (const [text, cls] of tokens(line, kind)) {
    const end = at + text.length;
    if (col && col >= at && col < end) {
      const i = col - at;
      if (i > 0) kids.push(span(text.slice(0, i), cls));
      kids.push(span(text.slice(i, i + 1), (cls ? cls + ' ' : '') + 'err-at'));
      if (i + 1 < text.length) kids.push(span(text.slice(i + 1), cls));
    } else kids.push(span(text, cls));
    at = end;
  }
  if (col && col >= at) kids.push(span(' ', 'err-at'));
  return kids;
}

function span(text, cls) {
  const e = document.createElement('span');
  if (cls) e.className = 'tk ' + cls;
  e.textContent = text;
  return e;
}

/** Draws `text` into `mirror`, banding the lines of `findings` ({line, col}). */
export function paint(mirror, text, kind, findings) {
  const marks = new Map();
  for (const f of findings || []) if (!marks.has(f.line)) marks.set(f.line, f.col);
  const lines = text.split('\n');
  const kids = lines.map((line, i) => {
    const col = marks.get(i + 1);
    const e = document.createElement('span');
    e.className = col ? 'ln err' : 'ln';
    e.append(...lineSpans(line, kind, col));
    e.append('\n');
    return e;
  });
  mirror.replaceChildren(...kids);
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
    area.setRangeText('\n' + indent, s, end, 'end');
    onChange();
  });
}
