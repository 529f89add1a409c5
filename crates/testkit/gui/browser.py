#!/usr/bin/env python3
"""Real-browser test of the Fuseforks web GUI (Playwright for Python, Debian's chromium).

Started by the Rust test with a `fuseforks-cli gui` whose village has one agent, `reception`
("Reception"), on a scripted stub LLM, `run` enabled, command approval `required` and a token
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
        page.set_default_timeout(TIMEOUT_MS)
        # A refusal the script asks for on purpose (one 422) is not a problem of the page.
        refusals = {"422": 0}

        def on_console(m):
            if m.type != "error":
                return
            if refusals["422"] > 0 and "status of 422" in m.text:
                refusals["422"] -= 1
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

            nav.get_by_role("link", name="Log").click()
            expect(page.get_by_role("heading", name="Log", level=1)).to_be_visible()
            pre = page.locator("#log-text")
            expect(pre).not_to_be_empty()
            shot(page, "log.png")

        with Step("files: edit and save SKILL.md with Ctrl+S"):
            nav = page.get_by_role("navigation", name="Pages")
            nav.get_by_role("link", name="Files").click()
            expect(page.get_by_role("heading", name="Files", level=1)).to_be_visible()
            pick = page.get_by_role("combobox", name="File")
            pick.select_option("agents/reception/SKILL.md")
            editor = page.get_by_role("textbox", name="File text")
            editor.fill("1. Greet the user.\n2. Answer briefly.\n")
            expect(page.get_by_text("Unsaved changes")).to_be_visible()
            editor.press("Control+s")
            expect(page.get_by_text("Saved agents/reception/SKILL.md.")).to_be_visible()
            r = page.request.get(urljoin(page.url, "/api/files/agents/reception/SKILL.md"))
            if r.json().get("text") != "1. Greet the user.\n2. Answer briefly.\n":
                fail("the saved SKILL.md reads %r" % r.json().get("text"))
            # Find selects the next match in the text.
            find = page.get_by_role("searchbox", name="Find in file")
            find.fill("Answer")
            find.press("Enter")
            picked = editor.evaluate("e => e.value.slice(e.selectionStart, e.selectionEnd)")
            if picked != "Answer":
                fail("Find selected %r" % picked)
            shot(page, "files.png")

        with Step("files: a broken judge.toml shows its problem at its line and is not saved"):
            pick.select_option("judges/gate/judge.toml")
            before = page.request.get(urljoin(page.url, "/api/files/judges/gate/judge.toml")).json()["text"]
            editor.fill("[questions.kind]\ntype = 7\n")
            findings = page.get_by_role("list", name="Problems")
            expect(findings.get_by_role("listitem").first).to_contain_text("line 2")
            expect(editor).to_have_attribute("aria-invalid", "true")
            refusals["422"] = 1
            page.get_by_role("button", name="Save", exact=True).click()
            expect(page.locator("#file-alert")).to_contain_text("FILE_INVALID")
            after = page.request.get(urljoin(page.url, "/api/files/judges/gate/judge.toml")).json()["text"]
            if after != before:
                fail("a broken judge.toml was written: %r" % after)
            shot(page, "files-invalid.png")
            editor.fill(before)  # back to the saved text: nothing to discard on the way out

        with Step("files: schedules.json shows each task's next due time as you type"):
            pick.select_option("schedules.json")
            expect(page.get_by_role("region", name="Schedule tasks")).to_be_visible()
            saved_text = editor.input_value()
            editor.fill('[{"id": "morning", "to": "reception", "message": "Good morning", '
                        '"recurrence": {"kind": "daily", "hour": 9, "minute": 0}}]')
            due = page.get_by_role("region", name="Next due")
            expect(due.get_by_role("listitem").first).to_contain_text(re.compile(r"morning → reception: \d{4}-\d\d-\d\d 09:00"))
            # The bracket at the caret and its match are marked in the code view.
            editor.evaluate("e => { e.focus(); e.setSelectionRange(0, 0); e.dispatchEvent(new MouseEvent('click')); }")
            expect(page.locator("#file-hl .match")).to_have_count(2)
            # The form edits the same text: a new time, then a second task.
            form = page.get_by_role("region", name="Schedule tasks")
            form.get_by_label("Time (morning)").fill("10:30")
            form.get_by_label("Time (morning)").press("Tab")
            expect(editor).to_have_value(re.compile(r'"hour": 10,\s+"minute": 30'))
            expect(due.get_by_role("listitem").first).to_contain_text("10:30")
            form.get_by_role("button", name="Add task").click()
            expect(form.get_by_role("listitem")).to_have_count(2)
            editor.fill(saved_text)

        with Step("files: world.json's model templates in a form"):
            pick.select_option("world.json")
            templates = page.get_by_role("region", name="Model templates")
            expect(templates).to_be_visible()
            world_text = editor.input_value()
            field = templates.get_by_label("Model of drafter")
            field.fill("stub-model-x")
            field.press("Tab")
            expect(editor).to_have_value(re.compile(r'"model": "stub-model-x"'))
            expect(page.get_by_role("list", name="Problems").get_by_role("listitem")).to_have_count(0)
            editor.fill(world_text)

        with Step("files: the assistant asks, then drafts into the editor (not saved)"):
            pick.select_option("agents/reception/Construct.md")
            assist = page.get_by_role("region", name="Draft with AI")
            expect(assist).to_be_visible()
            assist.get_by_role("combobox", name="Template").select_option("drafter")
            assist.get_by_role("textbox", name="Message to the assistant").fill("A calm receptionist")
            assist.get_by_role("button", name="Send").click()
            log = assist.get_by_role("list", name="Assistant conversation")
            expect(log).to_contain_text("Formal or casual?")
            assist.get_by_role("textbox", name="Message to the assistant").fill("casual")
            assist.get_by_role("button", name="Draft now").click()
            expect(assist.locator("#assist-draft-text")).to_contain_text("You greet people warmly.")
            assist.get_by_role("button", name="Put the draft in the editor").click()
            expect(editor).to_have_value("You greet people warmly.\n")
            expect(page.get_by_text("Unsaved changes")).to_be_visible()
            # One Ctrl+Z brings the text before the draft back.
            before_draft = page.request.get(urljoin(page.url, "/api/files/agents/reception/Construct.md")).json()["text"]
            editor.press("Control+z")
            expect(editor).to_have_value(before_draft)
            assist.get_by_role("button", name="Put the draft in the editor").click()
            expect(editor).to_have_value("You greet people warmly.\n")
            r = page.request.get(urljoin(page.url, "/api/files/agents/reception/Construct.md"))
            if "warmly" in r.json().get("text", ""):
                fail("the draft was saved by itself")
            shot(page, "files-assist.png")

        with Step("stats: tables and charts"):
            nav.get_by_role("link", name="Stats").click()
            expect(page.get_by_role("heading", name="Stats", level=1)).to_be_visible()
            expect(page.get_by_role("img", name="Tokens per day")).to_be_visible()
            expect(page.get_by_role("img", name="≈ $ per servant")).to_be_visible()
            servants = page.get_by_role("table", name="By servant")
            expect(servants.get_by_role("rowheader", name="reception")).to_be_visible()
            drafting = page.get_by_role("table", name="Drafting assistant (not charged to the budget)")
            expect(drafting.get_by_role("row")).to_have_count(2)
            expect(drafting).to_contain_text("(drafter)")
            detail = page.get_by_role("table", name="By conversation, servant, model and how the turn ended")
            expect(detail).to_contain_text("completed")
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
