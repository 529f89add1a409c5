// Fuseforks web GUI: the Files page's code editor, CodeMirror 6 (gui/vendor/codemirror.js, built
// by scripts/codemirror/) set up for the village's files: colours by kind (JSON, TOML, Markdown),
// line numbers, folding (JSON blocks, TOML tables and arrays, Markdown sections), find and
// replace, multiple cursors (Ctrl+click, Ctrl+D, Alt+drag), bracket matching and closing, undo
// history per file, the server's problems at their line and column, Ctrl+S to save. The content
// is a textbox named by `label`; its words come from the page's dictionary.

import {
  EditorState, EditorView, Compartment, keymap, lineNumbers, highlightActiveLine,
  highlightActiveLineGutter, drawSelection, dropCursor, rectangularSelection, crosshairCursor,
  highlightSpecialChars, defaultKeymap, history, historyKeymap, indentWithTab, StreamLanguage,
  HighlightStyle, syntaxHighlighting, bracketMatching, indentOnInput, foldGutter, foldKeymap,
  foldService, foldAll, unfoldAll, search, searchKeymap, openSearchPanel, closeSearchPanel, searchPanelOpen,
  highlightSelectionMatches,
  setDiagnostics, lintGutter, lintKeymap, closeBrackets, closeBracketsKeymap, json, toml, tags,
} from '/vendor/codemirror.js';

/** The kind of a file path, for colouring and folding. */
export function kindOf(path) {
  if (/\.json$/.test(path)) return 'json';
  if (/\.toml$/.test(path)) return 'toml';
  return 'md';
}

// Markdown as the village writes it: headings, list markers, code, strong text, secret refs.
const markdown = {
  name: 'markdown',
  startState: () => ({ fence: false }),
  token(stream, state) {
    if (stream.sol() && stream.match(/^\s*(```|~~~)/)) {
      state.fence = !state.fence;
      stream.skipToEnd();
      return 'meta';
    }
    if (state.fence) { stream.skipToEnd(); return 'monospace'; }
    if (stream.sol() && stream.match(/^#{1,6}\s.*/)) return 'heading';
    if (stream.sol() && stream.match(/^\s*(?:[-*+]|\d+\.)\s/)) return 'list';
    if (stream.match(/^`[^`]*`?/)) return 'monospace';
    if (stream.match(/^\*\*[^*]+\*\*/)) return 'strong';
    if (stream.match(/^\$\{secret:[^}]*\}/)) return 'keyword';
    stream.next();
    stream.eatWhile(/[^`*$\n]/);
    return null;
  },
};

const FENCE = /^\s*(```|~~~)/;
// A TOML table header: `[name]` or `[[name]]`, a comment after it at most (an array's own line,
// `[1, 2],` or a lone `[`, is not one).
const HEADER = /^\s*\[\[?\s*[A-Za-z0-9_"'-][^\]]*\]\]?\s*(#.*)?$/;

/** The last line (1-based) of a Markdown section whose heading is on `line`, or null.
 * `at(n)` is the text of line n, `count` the number of lines. */
export function sectionEnd(at, count, line) {
  const level = (s) => { const m = /^(#{1,6})\s/.exec(s); return m ? m[1].length : 0; };
  const own = level(at(line));
  if (!own) return null;
  let fence = false;
  for (let n = 1; n < line; n++) if (FENCE.test(at(n))) fence = !fence;
  if (fence) return null; // a `#` line inside a code fence is code, not a heading
  let last = line;
  for (let n = line + 1; n <= count; n++) {
    const text = at(n);
    if (FENCE.test(text)) fence = !fence;
    const l = fence ? 0 : level(text);
    if (l && l <= own) break;
    if (text.trim()) last = n;
  }
  return last > line ? last : null;
}

/** The last line (1-based) of a TOML table whose `[header]` is on `line`, or null. */
export function tableEnd(at, count, line) {
  if (!HEADER.test(at(line))) return null;
  let last = line;
  for (let n = line + 1; n <= count; n++) {
    const text = at(n);
    if (HEADER.test(text)) break;
    if (text.trim()) last = n;
  }
  return last > line ? last : null;
}

// A fold over whole lines: `end(at, count, n)` names the last line of the block opened on n.
function lineFold(end) {
  return foldService.of((state, from) => {
    const doc = state.doc;
    const line = doc.lineAt(from);
    const last = end((n) => doc.line(n).text, doc.lines, line.number);
    return last ? { from: line.to, to: doc.line(last).to } : null;
  });
}

/** The offset in `text` of the bracket that closes the one at 0 (strings, escapes and `#`
 * comments skipped), or -1. */
export function closingBracket(text) {
  const open = text[0];
  const close = open === '[' ? ']' : '}';
  let depth = 0;
  let quote = null;
  for (let i = 0; i < text.length; i++) {
    const ch = text[i];
    if (quote) {
      if (ch === '\\' && quote === '"') i++;
      else if (ch === quote) quote = null;
    } else if (ch === '"' || ch === "'") quote = ch;
    else if (ch === '#') { const nl = text.indexOf('\n', i); if (nl < 0) break; i = nl; }
    else if (ch === open) depth++;
    else if (ch === close && --depth === 0) return i;
  }
  return -1;
}

// TOML: tables by their header, and multi-line arrays / inline tables by their brackets.
function tomlBrackets() {
  return foldService.of((state, from, to) => {
    const text = state.sliceDoc(from, to);
    const open = /[[{]\s*(#.*)?$/.exec(text);
    if (!open || HEADER.test(text)) return null;
    const start = from + open.index;
    const end = closingBracket(state.doc.sliceString(start));
    return end >= 0 && start + end > to ? { from: to, to: start + end } : null;
  });
}

function language(kind) {
  if (kind === 'json') return [json()];
  if (kind === 'toml') return [StreamLanguage.define(toml), lineFold(tableEnd), tomlBrackets()];
  return [StreamLanguage.define(markdown), lineFold(sectionEnd)];
}

// Colours as classes, so that pages.css sets them (light and dark) under the page's CSP.
const colours = HighlightStyle.define([
  { tag: [tags.propertyName, tags.definition(tags.propertyName)], class: 'tk-key' },
  { tag: [tags.string, tags.monospace], class: 'tk-str' },
  { tag: [tags.number, tags.bool, tags.null, tags.atom, tags.keyword], class: 'tk-num' },
  { tag: tags.comment, class: 'tk-comment' },
  { tag: [tags.heading, tags.strong], class: 'tk-head' },
  { tag: [tags.list, tags.meta, tags.bracket, tags.punctuation, tags.separator], class: 'tk-punct' },
]);

// The editor's layout and chrome in the page's system colours (light or dark with the page).
const look = EditorView.theme({
  '&': { height: '100%', font: '13px/1.45 ui-monospace, monospace', color: 'CanvasText', background: 'Canvas' },
  '&.cm-focused': { outline: '2px solid #4a7bd0' },
  '&:has(.cm-content[aria-invalid="true"])': { boxShadow: 'inset 0 0 0 2px #c33' },
  '.cm-scroller': { fontFamily: 'inherit' },
  '.cm-gutters': { background: 'transparent', borderRight: '1px solid #8883', color: 'inherit', opacity: '.75' },
  '.cm-activeLine, .cm-activeLineGutter': { background: '#8881' },
  '.cm-content': { caretColor: 'CanvasText' },
  '.cm-cursor, .cm-dropCursor': { borderLeftColor: 'CanvasText' },
  '&.cm-focused > .cm-scroller > .cm-selectionLayer .cm-selectionBackground, .cm-selectionBackground':
    { background: '#4a7bd055' },
  '.cm-panels': { background: 'Canvas', color: 'CanvasText', borderColor: '#8884', font: '13px system-ui, sans-serif' },
  '.cm-textfield': { background: 'Field', color: 'FieldText', fontSize: '13px' },
  '.cm-button': { backgroundImage: 'none', background: 'ButtonFace', color: 'ButtonText', fontSize: '13px' },
  '.cm-foldPlaceholder': { background: '#8882', borderColor: '#8886', color: 'inherit' },
});

// CodeMirror's English phrases, each to a key of the page's dictionary.
const PHRASES = {
  Find: 'cm.find', Replace: 'cm.replace', next: 'cm.next', previous: 'cm.previous', all: 'cm.all',
  'match case': 'cm.matchCase', regexp: 'cm.regexp', 'by word': 'cm.byWord', replace: 'cm.replaceOne',
  'replace all': 'cm.replaceAll', close: 'cm.close', 'Fold line': 'cm.fold', 'Unfold line': 'cm.unfold',
  'folded code': 'cm.folded', unfold: 'cm.unfoldShort', 'Go to line': 'cm.goto', go: 'cm.go',
  Diagnostics: 'cm.diagnostics', 'No diagnostics': 'cm.noDiagnostics',
  'Control character': 'cm.control', 'current match': 'cm.currentMatch', 'on line': 'cm.onLine',
  'replaced $ matches': 'cm.replacedN', 'replaced match on line $': 'cm.replacedOn',
  'Selection deleted': 'cm.selectionDeleted', 'Folded lines': 'cm.foldedLines',
  'Unfolded lines': 'cm.unfoldedLines', to: 'cm.to',
};

function phrases(t) {
  const out = {};
  for (const [phrase, key] of Object.entries(PHRASES)) out[phrase] = t(key);
  return out;
}

/** How `text` ends its lines, so that it comes back byte for byte: 'crlf' when every line
 * ends with CR LF (edited as LF, given back as CR LF), 'lf' when none has a CR, else 'strict'
 * (mixed ends or a lone CR: only LF splits lines, and each CR stays a character of its line,
 * shown as a control character). */
export function lineEnds(text) {
  const crlf = (text.match(/\r\n/g) || []).length;
  if (!text.includes('\r')) return 'lf';
  return !/\r(?!\n)/.test(text) && crlf === (text.match(/\n/g) || []).length ? 'crlf' : 'strict';
}

/** The (from, to) offsets of a problem at 1-based (line, col) in `doc`, the column counted in
 * characters (as the server counts), the range one character, clamped to the line. */
export function problemRange(doc, line, col) {
  const l = doc.line(Math.min(Math.max(1, line || 1), doc.lines));
  let at = 0; // UTF-16 units into the line
  let left = Math.max(0, (col || 1) - 1);
  for (const ch of l.text) {
    if (left-- <= 0) break;
    at += ch.length;
  }
  const from = l.from + at;
  if (from < l.to) return [from, from + (l.text.codePointAt(at) > 0xffff ? 2 : 1)];
  return [Math.max(l.from, from - 1), l.to];
}

/**
 * An editor in `parent`. `opts`: { t, labelKey, onChange(), onSave() }. Returns the
 * handle the Files page uses: text(), load(text, kind), replaceAll(text), setProblems(list),
 * relabel(), focus(), find(), foldAll(), unfoldAll().
 */
export function createCodeEditor(parent, opts) {
  const lang = new Compartment();
  const words = new Compartment();
  const invalid = new Compartment();
  // The dictionary's words now (opts.t reads the page's current language).
  const wording = () => [
    EditorState.phrases.of(phrases(opts.t)),
    EditorView.contentAttributes.of({ 'aria-label': opts.t(opts.labelKey) }),
  ];
  let ends = 'lf';
  const base = (kind) => [
    ends === 'strict' ? EditorState.lineSeparator.of('\n') : [],
    lineNumbers(), highlightActiveLineGutter(), highlightSpecialChars(), history(), foldGutter(),
    drawSelection(), dropCursor(), EditorState.allowMultipleSelections.of(true), indentOnInput(),
    syntaxHighlighting(colours), bracketMatching(), closeBrackets(), rectangularSelection(),
    crosshairCursor(), highlightActiveLine(), highlightSelectionMatches(), search({ top: true }),
    lintGutter(), EditorState.tabSize.of(4), look,
    keymap.of([
      { key: 'Mod-s', preventDefault: true, run: () => { opts.onSave(); return true; } },
      ...closeBracketsKeymap, ...defaultKeymap, ...searchKeymap, ...historyKeymap, ...foldKeymap,
      ...lintKeymap, indentWithTab,
    ]),
    EditorView.updateListener.of((u) => { if (u.docChanged) opts.onChange(); }),
    EditorView.contentAttributes.of({ spellcheck: 'false' }),
    invalid.of(EditorView.contentAttributes.of({ 'aria-invalid': 'false' })),
    words.of(wording()),
    lang.of(language(kind)),
  ];
  // A shadow root of its own: there CodeMirror adopts its styles as constructed sheets, which the
  // page's CSP (style-src 'self') lets in, where a <style> element in the document would not be.
  const shadow = parent.attachShadow({ mode: 'open' });
  const sheet = document.createElement('link');
  sheet.rel = 'stylesheet';
  sheet.href = '/code.css';
  const host = document.createElement('div');
  host.className = 'code-host';
  shadow.append(sheet, host);
  const state = EditorState.create({ doc: '', extensions: base('md') });
  const view = new EditorView({ parent: host, root: shadow, state });
  // Ctrl+S in the search panel's fields too (the keymap covers only the text).
  view.dom.addEventListener('keydown', (e) => {
    if ((e.ctrlKey || e.metaKey) && !e.altKey && e.key.toLowerCase() === 's' && !e.defaultPrevented) {
      e.preventDefault();
      opts.onSave();
    }
  });
  return {
    view,
    /** The text, with the file's own line ends. */
    text: () => (ends === 'crlf' ? view.state.doc.toString().replace(/\n/g, '\r\n') : view.state.doc.toString()),
    /** A new file: its text, its kind, a fresh undo history; its line ends kept as they are. */
    load(text, kind) {
      ends = lineEnds(text);
      const doc = ends === 'crlf' ? text.replace(/\r\n/g, '\n') : text;
      view.setState(EditorState.create({ doc, extensions: base(kind) }));
    },
    /** Replaces the whole text as one edit (Ctrl+Z brings the text before it back). */
    replaceAll(text) {
      view.dispatch({ changes: { from: 0, to: view.state.doc.length, insert: text }, userEvent: 'input.replace' });
    },
    /** Marks the server's problems ({line, col, message, fix}) at their place. */
    setProblems(list) {
      const doc = view.state.doc;
      const diagnostics = (list || []).map((f) => {
        const [from, to] = problemRange(doc, f.line, f.col);
        return { from, to, severity: 'error', message: f.fix ? f.message + ' — ' + f.fix : f.message };
      });
      view.dispatch(setDiagnostics(view.state, diagnostics));
      const flag = EditorView.contentAttributes.of({ 'aria-invalid': diagnostics.length ? 'true' : 'false' });
      view.dispatch({ effects: invalid.reconfigure(flag) });
    },
    /** Takes the words of the page's language again (after the user picked another). */
    relabel() {
      view.dispatch({ effects: words.reconfigure(wording()) });
      if (searchPanelOpen(view.state)) { // its words are read when it opens
        const had = document.activeElement; // the Language select, say: it keeps the focus
        closeSearchPanel(view);
        openSearchPanel(view);
        if (had && had !== document.body && had.focus) had.focus();
      }
    },
    focus: () => view.focus(),
    find: () => openSearchPanel(view),
    foldAll: () => foldAll(view),
    unfoldAll: () => unfoldAll(view),
  };
}
