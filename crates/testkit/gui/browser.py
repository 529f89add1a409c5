#!/usr/bin/env python3
"""Real-browser test of the Fuseforks web GUI (Playwright for Python, Debian's chromium).

Started by the Rust test with a `fuseforks-cli gui` whose village has one agent, `reception`
("Reception"), on a scripted stub LLM, `run` and `ask_user` enabled, command approval `required` and a token
budget of 1,000,000:

    python3 browser.py --url URL --chromium /usr/bin/chromium --shots DIR

Prints `figure: ...` lines and `ok`; exits 1 with a message on the first failure, or when the
page logged a console error or threw.
"""

import argparse
import os
import re
import sys
import time
from urllib.parse import urljoin

from playwright.sync_api import Error as PlaywrightError
from playwright.sync_api import expect, sync_playwright

TIMEOUT_MS = 10_000


def fail(msg):
    print("FAIL: " + msg, file=sys.stderr, flush=True)
    sys.exit(1)


class Step:
    """Names the step in the failure message."""

    def __init__(self, name):
        self.name = name

    def __enter__(self):
        print("step: " + self.name, flush=True)
        return self

    def __exit__(self, kind, value, _tb):
        if kind is None or kind is SystemExit:
            return False
        fail("%s: %s: %s" % (self.name, kind.__name__, str(value).strip()))


def first_load_figures(page):
    """(ms, bytes) of the first navigation: time to load end, decoded bytes of it and its resources."""
    return page.evaluate(
        """() => {
          const nav = performance.getEntriesByType('navigation')[0];
          const res = performance.getEntriesByType('resource');
          let bytes = nav ? nav.decodedBodySize : 0;
          for (const r of res) if (!r.name.includes('/api/events')) bytes += r.decodedBodySize;
          const end = nav ? (nav.loadEventEnd || nav.domContentLoadedEventEnd || nav.duration) : 0;
          return [Math.round(end), bytes];
        }"""
    )


def map_node(page, agent_id):
    """The node of `agent_id` in GET /api/village's map (the page's cookie goes with it)."""
    r = page.request.get(urljoin(page.url, "/api/village"))
    if not r.ok:
        fail("GET /api/village answered %d" % r.status)
    for node in r.json()["map"]["nodes"]:
        if node["id"] == agent_id:
            return node
    fail("the map has no node %s" % agent_id)


def wait_until(check, what, timeout_s=TIMEOUT_MS / 1000):
    end = time.monotonic() + timeout_s
    while not check():
        if time.monotonic() > end:
            fail("timed out waiting until " + what)
        time.sleep(0.1)


# The Files editor's whole text, read from CodeMirror's state (the page draws only the lines in
# view, so the DOM alone does not hold a long file).
EDITOR_TEXT = """async () => {
  const { EditorView } = await import('/vendor/codemirror.js');
  return EditorView.findFromDOM(document.querySelector('#file-text').shadowRoot.querySelector('.cm-editor')).state.doc.toString();
}"""


def editor_text(page):
    return page.evaluate(EDITOR_TEXT)


def expect_editor(page, want):
    """Waits until the editor's text equals `want` (a str) or matches it (a compiled regex)."""
    seen = []

    def ok():
        seen[:] = [editor_text(page)]
        return seen[0] == want if isinstance(want, str) else bool(want.search(seen[0]))

    end = time.monotonic() + TIMEOUT_MS / 1000
    while not ok():
        if time.monotonic() > end:
            fail("the editor reads %r, not %r" % (seen[0], want))
        time.sleep(0.05)


def paste_all(editor, text):
    """Replaces the editor's text the way a user pastes it (Ctrl+A, then a paste event). Playwright's
    fill() types through the browser's insertText, which turns runs of spaces in an editable div
    into no-break spaces; a paste carries the text exactly."""
    editor.press("Control+a")
    editor.evaluate("""(e, text) => {
      const data = new DataTransfer();
      data.setData('text/plain', text);
      e.dispatchEvent(new ClipboardEvent('paste', { clipboardData: data, bubbles: true, cancelable: true }));
    }""", text)


def api_text(page, path):
    return page.request.get(urljoin(page.url, "/api/files/" + path)).json()["text"]


def send_chat(page, text):
    box = page.get_by_role("textbox", name="Message")
    box.fill(text)
    box.press("Enter")
    expect(box).to_have_value("", timeout=TIMEOUT_MS)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--url", required=True)
    ap.add_argument("--chromium", default="/usr/bin/chromium")
    ap.add_argument("--shots", required=True)
    args = ap.parse_args()
    os.makedirs(args.shots, exist_ok=True)
    shot = lambda page, name: page.screenshot(path=os.path.join(args.shots, name), full_page=True)

    problems = []
    expect.set_options(timeout=TIMEOUT_MS)
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=args.chromium, args=["--no-sandbox"])
        context = browser.new_context(viewport={"width": 1280, "height": 800}, locale="en-US")
        page = context.new_page()
        # A CSP refusal is reported with the file, line and column that caused it.
        page.add_init_script("document.addEventListener('securitypolicyviolation', (e) => console.error("
                             "'CSP refused ' + e.violatedDirective + ' at ' + e.sourceFile + ':' + e.lineNumber + ':' + e.columnNumber))")
        page.set_default_timeout(TIMEOUT_MS)
        # A refusal the script asks for on purpose (a 422, a 400) is not a problem of the page.
        refusals = {"422": 0, "400": 0}

        def on_console(m):
            if m.type != "error":
                return
            for status in refusals:
                if refusals[status] > 0 and "status of " + status in m.text:
                    refusals[status] -= 1
                    return
            problems.append("console %s: %s" % (m.type, m.text))

        page.on("console", on_console)
        page.on("pageerror", lambda e: problems.append("page error: %s" % e))

        with Step("village: open the printed URL, start the reception"):
            page.goto(args.url, wait_until="load")
            if not re.search(r"/(#.*)?$", page.url) or "token=" in page.url:
                fail("the token URL did not redirect to /: " + page.url)
            card = page.get_by_role("article", name="Reception")
            expect(card).to_be_visible()
            expect(card).to_contain_text("idle")
            ms, size = first_load_figures(page)
            print("figure: first load %d ms, %d bytes" % (ms, size), flush=True)
            if size > 100 * 1024:
                fail("the village page transferred %d bytes (> 100 KB)" % size)
            expect(page.get_by_role("button", name="Start batch")).to_be_visible()
            expect(card.get_by_role("img", name=re.compile(r"^context "))).to_be_visible()
            start = card.get_by_role("button", name="Start", exact=True)
            expect(start).to_be_enabled()
            expect(card.get_by_role("button", name="Stop", exact=True)).to_be_disabled()
            start.click()
            expect(card).to_contain_text("running")
            expect(card.get_by_role("button", name="Stop", exact=True)).to_be_enabled()
            expect(start).to_be_disabled()
            # The connection map: the node moves with the arrow keys and the move is saved.
            cmap = page.get_by_role("img", name="Connection map")
            expect(cmap).to_be_visible()
            node = cmap.get_by_role("button", name="Reception")
            expect(node).to_be_visible()
            x0 = map_node(page, "reception")["x"]
            node.focus()
            # One press at a time, each saved before the next (a village refresh between two
            # presses may redraw the node from the server's last saved place).
            for i in range(1, 4):
                node.press("ArrowRight")
                wait_until(lambda: abs(map_node(page, "reception")["x"] - (x0 + 10 * i)) <= 1,
                           "the map's Reception node is saved %d units right of x=%s"
                           % (10 * i, x0))
            shot(page, "village.png")

        with Step("chat: send Hello, see the stub's answer live"):
            card.get_by_role("link", name="Chat").click()
            expect(page).to_have_url(re.compile(r"#chat/reception$"))
            expect(page.get_by_role("combobox", name="Servant")).to_have_value("reception")
            log = page.get_by_role("log")
            box = page.get_by_role("textbox", name="Message")
            box.fill("Hello")
            t0 = time.monotonic()
            box.press("Enter")
            expect(log).to_contain_text("Hello")
            expect(log).to_contain_text("Hello from the stub.")
            answer_ms = (time.monotonic() - t0) * 1000
            print("figure: answer visible %d ms" % answer_ms, flush=True)
            lag = page.evaluate("() => window.__fuseforksLastEventLagMs")
            if not isinstance(lag, (int, float)):
                fail("the page handled no messageSent event (window.__fuseforksLastEventLagMs is %r)" % (lag,))
            print("figure: event latency %d ms" % lag, flush=True)
            # Shift+Enter makes a new line and sends nothing.
            box.fill("line one")
            box.press("Shift+Enter")
            box.press_sequentially("line two")
            expect(box).to_have_value("line one\nline two")
            box.fill("")
            shot(page, "chat.png")

        with Step("approvals: a pending run, approve and continue"):
            send_chat(page, "Run it")
            expect(log).to_contain_text("Waiting for approval.")
            # The tool row of the `run` call opens its arguments and result.
            tool = log.get_by_role("button", name=re.compile(r"^Tool run (ok|failed) — details$"))
            expect(tool).to_have_count(1)
            expect(tool).to_have_attribute("aria-expanded", "false")
            tool.click()
            expect(tool).to_have_attribute("aria-expanded", "true")
            args_fig = log.get_by_role("figure", name="Arguments")
            expect(args_fig).to_contain_text('"echo"')
            expect(args_fig).to_contain_text("approved")
            expect(log.get_by_role("figure", name="Result").locator("pre")).not_to_be_empty()
            nav_approvals = page.get_by_role("navigation").get_by_role("link", name=re.compile(r"^Approvals"))
            expect(nav_approvals).to_have_accessible_name(re.compile(r"^Approvals\s+1 pending$"))
            nav_approvals.click()
            expect(page).to_have_url(re.compile(r"#approvals$"))
            row = page.get_by_role("listitem").filter(has_text="echo")
            expect(row).to_have_count(1)
            expect(row).to_contain_text("approved")
            expect(row).to_contain_text("Reception")
            for name in ("Approve exactly", "Approve pattern", "Reject"):
                expect(row.get_by_role("button", name=name, exact=True)).to_be_visible()
            shot(page, "approvals.png")
            row.get_by_role("button", name="Approve and continue").click()
            expect(page.get_by_text("Nothing is waiting for approval.")).to_be_visible()
            expect(nav_approvals).to_have_accessible_name("Approvals")
            page.get_by_role("navigation").get_by_role("link", name="Chat").click()
            expect(page).to_have_url(re.compile(r"#chat/reception$"))
            log = page.get_by_role("log")
            expect(log).to_contain_text("Ran after approval.")

        with Step("chat: a question (ask_user) waits, a choice answers it"):
            send_chat(page, "Pick a colour")
            question = log.get_by_role("group", name="Reception asks")
            expect(question).to_contain_text("Which colour?")
            expect(question.get_by_role("textbox", name="Your answer")).to_be_visible()
            shot(page, "question.png")
            question.get_by_role("button", name="blue", exact=True).click()
            expect(log).to_contain_text("Blue it is.")
            expect(question.get_by_role("status")).to_contain_text("Answered: blue")
            expect(question.get_by_role("button", name="Answer")).to_have_count(0)

        with Step("interrupt a slow turn"):
            interrupt = page.get_by_role("button", name="Interrupt")
            typing = page.get_by_role("region", name="Chat").get_by_text("typing…")
            send_chat(page, "Take your time")
            expect(typing).to_be_visible()
            expect(interrupt).to_be_enabled()
            # The running request's budget (the village's 1,000,000 tokens) is in the status bar.
            expect(page.get_by_role("contentinfo")).to_contain_text(re.compile(r"Budget left: [\d,]+ of 1,000,000"))
            interrupt.click()
            expect(log).to_contain_text("Interrupted.")
            expect(log.get_by_text("Too slow.")).to_have_count(0)
            expect(typing).to_have_count(0)

        with Step("conversations, settings and log pages"):
            nav = page.get_by_role("navigation")
            nav.get_by_role("link", name="Conversations").click()
            expect(page.get_by_role("heading", name="Conversations", level=1)).to_be_visible()
            first = page.get_by_role("listitem").filter(has=page.get_by_role("button", name="Open"))
            expect(first.first).to_be_visible()
            expect(first.first.get_by_role("link", name="Export")).to_have_attribute("download", re.compile(r".+"))
            shot(page, "conversations.png")

            nav.get_by_role("link", name="Settings").click()
            key = page.get_by_label(re.compile(r"^API key for "))
            expect(key.first).to_be_visible()
            for i in range(key.count()):
                expect(key.nth(i)).to_have_attribute("type", "password")
                expect(key.nth(i)).to_have_value("")
            expect(page.get_by_role("checkbox", name="Door enabled")).to_be_visible()
            expect(page.get_by_role("spinbutton", name="Door port")).to_be_visible()
            expect(page.get_by_role("spinbutton", name="Token budget")).to_be_visible()
            expect(page.get_by_role("spinbutton", name="Ask timeout (seconds)")).to_be_visible()
            shot(page, "settings.png")

        with Step("settings: a wrong value is said at its field, in English then Japanese"):
            settings_now = lambda: page.request.get(urljoin(page.url, "/api/settings")).json()
            before = settings_now()
            posts = []
            on_request = lambda r: posts.append(r.url) if r.method == "POST" else None
            page.on("request", on_request)
            budget = page.get_by_role("spinbutton", name="Token budget")
            budget.fill("-5")
            budget.press("Enter")
            expect(budget).to_have_attribute("aria-invalid", "true")
            expect(budget).to_have_accessible_description("Use 1 or more.")
            expect(budget).to_be_focused()
            page.wait_for_timeout(300)
            page.remove_listener("request", on_request)
            if posts:
                fail("a refused field still sent %r" % posts)
            if settings_now() != before:
                fail("the settings changed after a refused field")
            # In Japanese: the field's words, and a refusal of the server (a number past what a
            # budget holds, which the page's check lets through) with its code, its words in
            # Japanese and the server's English as a detail.
            page.get_by_role("combobox", name="Language").select_option("ja")
            budget = page.get_by_role("spinbutton", name="トークン予算")
            expect(budget).to_have_accessible_description("1 以上にしてください。")
            refusals["400"] += 1
            budget.fill("100000000000000000000")
            page.get_by_role("button", name="上限を保存").click()
            alert = page.locator("#limits-alert")
            expect(alert).to_contain_text("GUI_FIELD_INVALID")
            expect(alert).to_contain_text("この欄の値は使えません。")
            expect(alert.get_by_role("group")).to_contain_text("サーバーの説明（英語）")
            expect(budget).to_have_attribute("aria-invalid", "true")
            expect(budget).to_have_accessible_description("この欄の値は使えません。")
            expect(budget).to_be_focused()
            if settings_now() != before:
                fail("the settings changed after a refused value")
            # Every control of the page keeps a role and a name in Japanese.
            controls = page.locator("#page-settings").locator("input, select, textarea, button")
            for i in range(controls.count()):
                expect(controls.nth(i)).to_have_accessible_name(re.compile(r"\S"))
            shot(page, "settings-ja-refused.png")
            page.get_by_role("combobox", name="言語").select_option("en")
            budget = page.get_by_role("spinbutton", name="Token budget")
            expect(alert).to_contain_text("GUI_FIELD_INVALID")
            expect(alert).to_contain_text("tokenBudget")
            budget.fill("")
            expect(budget).not_to_have_attribute("aria-invalid", "true")

            nav.get_by_role("link", name="Log").click()
            expect(page.get_by_role("heading", name="Log", level=1)).to_be_visible()
            pre = page.locator("#log-text")
            expect(pre).not_to_be_empty()
            shot(page, "log.png")

        with Step("files: edit and save SKILL.md with Ctrl+S"):
            nav = page.get_by_role("navigation", name="Pages")
            opened = time.monotonic()
            nav.get_by_role("link", name="Files").click()
            expect(page.get_by_role("heading", name="Files", level=1)).to_be_visible()
            expect(page.get_by_role("textbox", name="File text")).to_be_visible()
            first_file = round((time.monotonic() - opened) * 1000)
            module_bytes = page.evaluate("""() => performance.getEntriesByType('resource')
              .filter((r) => /\/(editors|code|forms)\.js$|\/vendor\/|\/code\.css$|\/pages\.css$/.test(r.name))
              .reduce((n, r) => n + r.decodedBodySize, 0)""")
            print("figure: files page first open %d ms, %d bytes of modules" % (first_file, module_bytes), flush=True)
            pick = page.get_by_role("combobox", name="File")
            pick.select_option("agents/reception/SKILL.md")
            editor = page.get_by_role("textbox", name="File text")
            # The file comes asynchronously: type only once the editor holds it (no longer
            # busy), or the keys land in the file shown before and the load replaces them.
            expect(page.locator("#file-text")).not_to_have_attribute("aria-busy", "true")
            editor.press("Control+a")
            editor.press_sequentially("1. Greet the user.\n2. Answer briefly.\n")  # typed, key by key
            expect(page.get_by_text("Unsaved changes")).to_be_visible()
            editor.press("Control+s")
            expect(page.get_by_text("Saved agents/reception/SKILL.md.")).to_be_visible()
            if api_text(page, "agents/reception/SKILL.md") != "1. Greet the user.\n2. Answer briefly.\n":
                fail("the saved SKILL.md reads %r" % api_text(page, "agents/reception/SKILL.md"))

        with Step("files: find and replace, multiple cursors, folding"):
            page.get_by_role("button", name="Find and replace").click()
            find = page.get_by_role("textbox", name="Find", exact=True)
            find.press_sequentially("Answer")  # the panel takes its query as keys are let go
            find.press("Enter")
            expect(page.locator(".cm-searchMatch-selected")).to_have_text("Answer")
            shot(page, "files.png")
            page.get_by_role("textbox", name="Replace", exact=True).press_sequentially("Reply")
            page.get_by_role("button", name="replace all").click()
            expect_editor(page, "1. Greet the user.\n2. Reply briefly.\n")
            page.get_by_role("button", name="close").click()
            editor.press("Control+z")  # the replacement is one undoable edit
            expect_editor(page, "1. Greet the user.\n2. Answer briefly.\n")
            # Ctrl+D twice: a cursor on each "x"; what is typed lands at both.
            paste_all(editor, "x one\nx two\n")
            editor.press("Control+Home")
            editor.press("Control+d")
            editor.press("Control+d")
            expect(page.locator(".cm-selectionBackground")).to_have_count(2)
            editor.press_sequentially("y")
            expect_editor(page, "y one\ny two\n")
            # Folding: each Markdown section folds under its heading, and unfolds again.
            paste_all(editor, "# Steps\n1. Greet.\n\n# Tone\nBrief.\n")
            page.get_by_role("button", name="Fold all", exact=True).click()
            expect(page.locator(".cm-foldPlaceholder")).to_have_count(2)
            expect(editor).not_to_contain_text("Greet.")
            page.get_by_role("button", name="Unfold all").click()
            expect(page.locator(".cm-foldPlaceholder")).to_have_count(0)
            expect(editor).to_contain_text("Greet.")
            paste_all(editor, "1. Greet the user.\n2. Answer briefly.\n")  # the saved text again
            expect(page.get_by_text("Saved", exact=True)).to_be_visible()

        with Step("files: CR LF line ends survive an edit"):
            pick.select_option("Ordinance.md")
            expect_editor(page, "# Rules\nBe kind.\n")  # edited as LF lines, given back as CR LF
            expect(page.get_by_text("Saved", exact=True)).to_be_visible()  # opened, not changed
            editor.press("Control+End")
            editor.press_sequentially("Be brief.")
            editor.press("Enter")
            editor.press("Control+s")
            expect(page.get_by_text("Saved Ordinance.md.")).to_be_visible()
            if api_text(page, "Ordinance.md") != "# Rules\r\nBe kind.\r\nBe brief.\r\n":
                fail("Ordinance.md was saved as %r" % api_text(page, "Ordinance.md"))

        with Step("files: the editor's own helpers (folds, columns, line ends), in the page"):
            got = page.evaluate("""async () => {
              const c = await import('/code.js');
              const { EditorState } = await import('/vendor/codemirror.js');
              const lines = (a) => [(n) => a[n - 1], a.length];
              const doc = (t) => EditorState.create({ doc: t }).doc;
              const toml = ['[a]', 'x = [', '  [', '  1,', '  ],', ']', '[b]', 'y = 1'];
              const md = ['# A', '```', '# code', '```', 'text', '# B', 'b'];
              return {
                stringBracket: c.closingBracket('[\\n "]",\\n 2,\\n]'),
                quoteBrace: c.closingBracket("{ a = 'x}' }"),
                commentBracket: c.closingBracket('[ # ]\\n 1 ]'),
                open: c.closingBracket('[ 1, 2'),
                table: c.tableEnd(...lines(toml), 1),
                notHeader: c.tableEnd(...lines(toml), 3),
                section: c.sectionEnd(...lines(md), 1),
                inFence: c.sectionEnd(...lines(md), 3),
                ends: ['a\\r\\nb\\r\\n', 'a\\nb', 'a\\rb\\n', 'a\\r\\nb\\n', ''].map(c.lineEnds),
                wide: c.problemRange(doc('{"a": "おはよう", x}'), 1, 15),
                astral: c.problemRange(doc('"😀", x'), 1, 6),
                pastEnd: c.problemRange(doc('ab\\ncd'), 9, 9),
              };
            }""")
            want = {
                "stringBracket": 12, "quoteBrace": 11, "commentBracket": 9, "open": -1,
                "table": 6, "notHeader": None, "section": 5, "inFence": None,
                "ends": ["crlf", "lf", "strict", "strict", "lf"],
                "wide": [14, 15], "astral": [6, 7], "pastEnd": [4, 5],
            }
            for key, value in want.items():
                if got.get(key) != value:
                    fail("%s: %r, not %r" % (key, got.get(key), value))

        with Step("files: a broken judge.toml shows its problem at its line and is not saved"):
            pick.select_option("judges/gate/judge.toml")
            before = api_text(page, "judges/gate/judge.toml")
            expect_editor(page, before)
            # A TOML table folds under its header, a multi-line array under its bracket.
            paste_all(editor, "[a]\nx = 1\n\n[b]\ny = [\n  1,\n]\n")
            page.get_by_role("button", name="Fold all", exact=True).click()
            expect(page.locator(".cm-foldPlaceholder")).to_have_count(2)
            page.get_by_role("button", name="Unfold all").click()
            editor.press("Control+End")
            editor.press("ArrowUp")
            editor.press("ArrowUp")
            editor.press("ArrowUp")
            editor.press("Control+Shift+BracketLeft")  # folds the array the caret is in
            expect(page.locator(".cm-foldPlaceholder")).to_have_count(1)
            expect(editor).not_to_contain_text("1,")
            paste_all(editor, "[questions.kind]\ntype = 7\n")
            findings = page.get_by_role("list", name="Problems")
            expect(findings.get_by_role("listitem").first).to_contain_text("line 2")
            expect(editor).to_have_attribute("aria-invalid", "true")
            # The problem is marked in the text at its line: a gutter mark and an underline.
            lines = {m for item in findings.get_by_role("listitem").all_inner_texts()
                     for m in re.findall(r"^line (\d+),", item)}
            expect(page.locator(".cm-lint-marker-error")).to_have_count(len(lines))
            expect(page.locator(".cm-lintRange-error").first).to_be_visible()
            refusals["422"] = 1
            page.get_by_role("button", name="Save", exact=True).click()
            expect(page.locator("#file-alert")).to_contain_text("FILE_INVALID")
            after = page.request.get(urljoin(page.url, "/api/files/judges/gate/judge.toml")).json()["text"]
            if after != before:
                fail("a broken judge.toml was written: %r" % after)
            shot(page, "files-invalid.png")
            paste_all(editor, before)  # back to the saved text: nothing to discard on the way out

        with Step("files: schedules.json shows each task's next due time as you type"):
            pick.select_option("schedules.json")
            expect(page.get_by_role("region", name="Schedule tasks")).to_be_visible()
            saved_text = api_text(page, "schedules.json")
            expect_editor(page, saved_text)
            paste_all(editor, '[{"id": "morning", "to": "reception", "message": "Good morning", '
                        '"recurrence": {"kind": "daily", "hour": 9, "minute": 0}}]')
            due = page.get_by_role("region", name="Next due")
            expect(due.get_by_role("listitem").first).to_contain_text(re.compile(r"morning → reception: \d{4}-\d\d-\d\d 09:00"))
            # The bracket at the caret and its match are marked in the code view.
            editor.press("Control+Home")
            expect(page.locator(".cm-matchingBracket")).to_have_count(2)
            # The form edits the same text: a new time, then a second task.
            form = page.get_by_role("region", name="Schedule tasks")
            # Typed key by key (each digit a change): the field keeps the focus, the last wins.
            time_field = form.get_by_label("Time (morning)")
            time_field.focus()
            page.keyboard.type("1030AM")
            expect(time_field).to_be_focused()
            time_field.blur()
            # Tab out of a changed field goes on to the next one (the form is not rebuilt).
            message = form.get_by_label("Message (morning)")
            message.fill("Good morning!")
            message.press("Tab")
            expect(form.get_by_label("Repeats (morning)")).to_be_focused()
            expect_editor(page, re.compile(r'"message": "Good morning!"'))
            expect_editor(page, re.compile(r'"hour": 10,\s+"minute": 30'))
            expect(due.get_by_role("listitem").first).to_contain_text("10:30")
            form.get_by_role("button", name="Add task").click()
            expect(form.get_by_role("listitem")).to_have_count(2)
            # Saved in another layout, the file is written in the village's; the editor then
            # shows the file as it is on disk, and nothing is left unsaved.
            paste_all(editor, saved_text.replace("\n", "\n\n"))
            editor.press("Control+s")
            expect(page.get_by_text("Saved schedules.json.")).to_be_visible()
            expect_editor(page, api_text(page, "schedules.json"))
            expect(page.get_by_text("Saved", exact=True)).to_be_visible()

        with Step("files: world.json's model templates in a form"):
            pick.select_option("world.json")
            templates = page.get_by_role("region", name="Model templates")
            expect(templates).to_be_visible()
            world_text = api_text(page, "world.json")
            expect_editor(page, world_text)
            # A field the form does not show keeps its exact text, a number past 2^53 included.
            paste_all(editor, world_text.replace("{", '{\n  "x-big": 9007199254740993, "x-float": 1.50, "x-esc": "\\u00e9",', 1))
            field = templates.get_by_label("Model of drafter")
            field.fill("stub-model-x")
            field.press("Tab")
            expect_editor(page, re.compile(r'"model": "stub-model-x"'))
            expect_editor(page, re.compile(r'"x-big": 9007199254740993,\s+"x-float": 1.50,\s+"x-esc": "\\u00e9",'))
            expect(page.get_by_role("list", name="Problems").get_by_role("listitem")).to_have_count(0)
            paste_all(editor, world_text)
            expect_editor(page, world_text)

        with Step("files: the assistant's templates (one disabled, with why) and the remembered choice"):
            pick.select_option("agents/reception/Construct.md")
            assist = page.get_by_role("region", name="Draft with AI")
            expect(assist).to_be_visible()
            template = assist.get_by_role("combobox", name="Template")
            plain = template.get_by_role("option", name=re.compile(r"^Plain \(cannot draft: useTools is off"))
            expect(plain).to_be_disabled()
            expect(template.get_by_role("option", name="drafter")).to_be_enabled()
            template.select_option("drafter")
            remembered = lambda: page.evaluate("localStorage.getItem('fuseforks.assist.v1')")
            if remembered() != '{"templateId":"drafter"}':
                fail("the choice is not remembered: %r" % remembered())
            # After a reload the choice is back; a remembered template that cannot draft is
            # dropped (the first one that can is chosen).
            for stored, want, kept in (('{"templateId":"drafter"}', "drafter", True),
                                       ('{"templateId":"plain"}', "stub", False)):
                page.evaluate("(v) => localStorage.setItem('fuseforks.assist.v1', v)", stored)
                page.reload()
                expect(page.get_by_role("heading", name="Files", level=1)).to_be_visible()
                pick.select_option("agents/reception/Construct.md")
                expect(template).to_have_value(want)
                if (remembered() == stored) != kept:
                    fail("after %s the stored choice is %r" % (stored, remembered()))
            template.select_option("drafter")

        with Step("files: the assistant asks, then drafts into the editor (not saved)"):
            assist.get_by_role("textbox", name="Message to the assistant").fill("A calm receptionist")
            assist.get_by_role("button", name="Send").click()
            log = assist.get_by_role("list", name="Assistant conversation")
            expect(log).to_contain_text("Formal or casual?")
            # The conversation is never thrown away without asking: a new one, or another
            # file, asks first; declined, everything stays.
            asked = []

            def decline(d):
                asked.append(d.message)
                d.dismiss()

            def until_asked(n, what):
                for _ in range(100):  # the page's timer lets the dialog event through
                    if len(asked) >= n:
                        return
                    page.wait_for_timeout(100)
                fail("no question " + what)

            page.once("dialog", decline)
            assist.get_by_role("button", name="New conversation").click()
            until_asked(1, "before a new conversation")
            page.once("dialog", decline)
            pick.select_option("agents/reception/SKILL.md")
            until_asked(2, "before another file")
            if not all("assistant conversation" in a for a in asked):
                fail("the questions do not name the conversation: %r" % asked)
            expect(pick).to_have_value("agents/reception/Construct.md")
            expect(log).to_contain_text("Formal or casual?")
            assist.get_by_role("textbox", name="Message to the assistant").fill("casual")
            assist.get_by_role("button", name="Draft now").click()
            expect(assist.get_by_role("textbox", name="Draft text")).to_contain_text("You greet people warmly.")
            # Every control of the panel has a role and a name (none bare in the tree).
            tree = assist.aria_snapshot()
            bare = [l.strip() for l in tree.splitlines()
                    if re.match(r"^\s*- (button|combobox|textbox|checkbox|link|option|list)( \[.*\])?:?$", l)]
            if bare:
                fail("controls without a name in the assistant's panel: %r\n%s" % (bare, tree))
            # Before it goes in: the characters from the editor's to the draft's, lines +/-.
            expect(assist.locator("#assist-draft-diff")).to_contain_text(
                re.compile(r"^\d+ → 25 characters; \d+ lines added, \d+ removed$"))
            put = assist.get_by_role("button", name="Put the draft in the editor")
            page.once("dialog", lambda d: d.accept())  # the editor is not empty: it asks first
            put.click()
            expect_editor(page, "You greet people warmly.\n")
            expect(page.get_by_text("Unsaved changes")).to_be_visible()
            # One Ctrl+Z, or "Take the draft back out", brings the text before the draft back.
            before_draft = api_text(page, "agents/reception/Construct.md")
            editor.press("Control+z")
            expect_editor(page, before_draft)
            page.once("dialog", lambda d: d.accept())
            put.click()
            expect_editor(page, "You greet people warmly.\n")
            assist.get_by_role("button", name="Take the draft back out").click()
            expect_editor(page, before_draft)
            page.once("dialog", lambda d: d.accept())
            put.click()
            expect_editor(page, "You greet people warmly.\n")
            r = page.request.get(urljoin(page.url, "/api/files/agents/reception/Construct.md"))
            if "warmly" in r.json().get("text", ""):
                fail("the draft was saved by itself")
            shot(page, "files-assist.png")
            # A judge draft shows how the parser took it, and in how many rounds (the unsaved
            # Construct.md is discarded: its prompt is accepted this time).
            page.once("dialog", lambda d: d.accept())
            pick.select_option("judges/gate/judge.toml")
            expect_editor(page, api_text(page, "judges/gate/judge.toml"))
            assist.get_by_role("combobox", name="Template").select_option("drafter")
            assist.get_by_role("button", name="Draft now").click()
            expect(assist.locator("#assist-draft-note")).to_contain_text("passed the parser (round 1)")

        with Step("files: a language switch on the Files page reaches the editor and its panel"):
            page.get_by_role("combobox", name="Language").select_option("ja")
            expect(page.get_by_role("textbox", name="ファイルの本文")).to_be_visible()
            # The assistant's disabled template says why in the page's language.
            expect(page.get_by_role("option", name=re.compile(r"^Plain\(下書きを作れません"))).to_be_disabled()
            page.get_by_role("button", name="検索と置換").click()
            expect(page.get_by_role("textbox", name="検索", exact=True)).to_be_visible()
            page.get_by_role("combobox", name="言語").select_option("en")
            expect(page.get_by_role("textbox", name="File text")).to_be_visible()
            expect(page.get_by_role("textbox", name="Find", exact=True)).to_be_visible()

        with Step("stats: tables and charts"):
            nav.get_by_role("link", name="Stats").click()
            expect(page.get_by_role("heading", name="Stats", level=1)).to_be_visible()
            expect(page.get_by_role("img", name="Tokens per day")).to_be_visible()
            expect(page.get_by_role("img", name="≈ $ per servant")).to_be_visible()
            servants = page.get_by_role("table", name="By servant")
            expect(servants.get_by_role("rowheader", name="reception")).to_be_visible()
            expect(page.get_by_role("table", name="Judges (their routing calls)")).to_be_visible()
            expect(page.get_by_text("No judge calls.")).to_be_visible()
            drafting = page.get_by_role("table", name="Drafting assistant (not charged to the budget)")
            expect(drafting.get_by_role("row")).to_have_count(2)
            expect(drafting).to_contain_text("(drafter)")
            # The money spent counts the assistant's calls (the stub's templates have no price).
            expect(page.locator("#stats-spent")).to_have_text("Spent in all: - (turns - + drafting assistant -)")
            detail = page.get_by_role("table", name="By conversation, servant, model and how the turn ended")
            expect(detail).to_contain_text("completed")
            # Fetch prices: the table (a loopback stub) fills the stub model's rates, and the
            # totals then say how old the prices are.
            page.get_by_role("button", name="Fetch prices").click()
            expect(page.locator("#stats-prices")).to_contain_text("Prices as of 2026-11-01: 3 template(s) updated")
            expect(page.locator("#stats-total")).to_contain_text("prices as of 2026-11-01 (")
            expect(page.locator("#stats-total")).to_contain_text("≈ $")
            shot(page, "stats.png")

        with Step("servants: create one, connect the reception to it, switch a judge on"):
            nav.get_by_role("link", name="Servants").click()
            expect(page.get_by_role("heading", name="Servants", level=1)).to_be_visible()
            page.get_by_role("textbox", name="Servant id").fill("helper")
            page.get_by_role("textbox", name="Display name").fill("Helper")
            page.get_by_role("button", name="Create servant").click()
            expect(page.get_by_text("Created Helper.")).to_be_visible()
            row = page.get_by_role("article", name="Reception")
            row.get_by_role("combobox", name="Connect to").select_option("helper")
            row.get_by_role("button", name="Connect", exact=True).click()
            expect(page.get_by_role("article", name="Reception").get_by_role("button", name="Disconnect Helper")).to_be_visible()
            edges = page.request.get(urljoin(page.url, "/api/village")).json()["map"]["edges"]
            if {"from": "reception", "to": "helper"} not in edges:
                fail("the edge reception -> helper is not in the map: %r" % edges)
            gate = page.get_by_role("article", name="Gate")
            gate.get_by_role("checkbox", name="Enabled").check()
            expect(page.get_by_role("article", name="Gate").get_by_role("checkbox", name="Enabled")).to_be_checked()
            shot(page, "servants.png")
            # Delete asks first, and says what will still name the servant: a schedule task.
            page.get_by_role("article", name="Spare").get_by_role("button", name="Delete").click()
            dialog = page.get_by_role("dialog", name="Delete Spare?")
            expect(dialog).to_contain_text("Schedule tasks still send to it: nightly")
            dialog.get_by_role("button", name="Delete").click()
            expect(page.get_by_role("article", name="Spare")).to_have_count(0)
            expect(page.locator("#cast-status")).to_contain_text("Schedule tasks still send to it: nightly")

        with Step("status bar"):
            bar = page.get_by_role("contentinfo")
            for name in ("Pause", "Resume", "Abort", "Halt"):
                expect(bar.get_by_role("button", name=name, exact=True)).to_be_visible()
            expect(bar.get_by_role("combobox", name="Command approval")).to_have_value("required")
            expect(bar.get_by_role("checkbox", name="Skip plan review")).to_be_visible()
            expect(bar).to_contain_text(re.compile(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d"))
            # Halt asks first; Cancel leaves everything as it was.
            bar.get_by_role("button", name="Halt", exact=True).click()
            dialog = page.get_by_role("dialog")
            expect(dialog).to_be_visible()
            dialog.get_by_role("button", name="Cancel").click()
            expect(dialog).to_be_hidden()

        # A last tick so that late console errors are seen.
        page.wait_for_timeout(300)
        context.close()
        browser.close()

    if problems:
        fail("the page reported errors:\n  " + "\n  ".join(problems))
    print("ok", flush=True)


if __name__ == "__main__":
    try:
        main()
    except PlaywrightError as e:
        fail("playwright: %s" % str(e).strip())
