// The CodeMirror 6 parts gui/code.js uses, re-exported so that esbuild makes them one ES module
// (gui/vendor/codemirror.js). Add an export here, run ./build.sh, commit both.
export { EditorState, EditorSelection, Compartment } from '@codemirror/state';
export {
  EditorView, keymap, lineNumbers, highlightActiveLine, highlightActiveLineGutter, drawSelection,
  dropCursor, rectangularSelection, crosshairCursor, highlightSpecialChars,
} from '@codemirror/view';
export { defaultKeymap, history, historyKeymap, indentWithTab } from '@codemirror/commands';
export {
  StreamLanguage, HighlightStyle, syntaxHighlighting, bracketMatching, indentOnInput, foldGutter,
  foldKeymap, foldService, foldAll, unfoldAll, foldedRanges, foldable,
} from '@codemirror/language';
export {
  search, searchKeymap, openSearchPanel, closeSearchPanel, searchPanelOpen, highlightSelectionMatches,
} from '@codemirror/search';
export { setDiagnostics, lintGutter, lintKeymap } from '@codemirror/lint';
export { closeBrackets, closeBracketsKeymap } from '@codemirror/autocomplete';
export { json } from '@codemirror/lang-json';
export { toml } from '@codemirror/legacy-modes/mode/toml';
export { tags } from '@lezer/highlight';
