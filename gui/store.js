// The page's shared state, in one place: what every page module reads and writes. Nothing
// here draws or fetches; the modules that own a part of the page change it.

export const S = {
  lang: 'en',
  dict: {}, // key -> words, the first load's and (once wanted) the later pages'
  codes: {}, // server code -> its Japanese {message, fix}, once ja is chosen
  pagesWanted: false, // a later page opened: its words load with every dictionary
  village: null,
  agents: new Map(), // id -> agent (as /api/village, patched by events)
  typing: new Map(), // id -> bool
  eventAt: new Map(), // "id:field" -> performance.now() of the last event that set it
  chats: new Map(), // id -> {sessionId, messages}
  locals: new Map(), // id -> tool rows, notes, failures (client-side rows of the chat)
  chatAgent: null,
  page: 'village',
  gen: 0, // bumps on a language change: every row is drawn again
  planEdits: new Map(),
  convViewId: null,
  convSessions: [],
  deleteId: null,
  deleteAlert: null, // the alert box of the row whose delete the dialog confirms
  live: 'off',
  opened: false, // the event stream opened once: a reopening reads everything again
  chatScroll: false, // the next chat redraw scrolls to the end (a message just sent)
  settingsGen: null, // the `gen` the Settings page was last read in
};
