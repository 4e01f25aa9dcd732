"""The console and the scoreboard in headless Chromium, driven as an operator would: a Sinuca Brasileira
match whose opening shot's first contact the camera saw unsure (the referee asks), and whose second
shot needs a nomination. The operator answers the question with one click and the pending call becomes
a call; nominates red into TR by keyboard and a click on the pocket; the next shot's call (the red
went into BR: a foul under rule 4) follows; and the operator undoes it with a reason, which takes the
seven points back. The clip's frames stop at a few points so the browser can act as a person would
between shots.

Set ``CUEREF_DOCS_IMAGES=1`` to write the screenshots into ``docs/images/`` (else a temporary folder).
"""

from __future__ import annotations

import os
import shutil
import threading
from pathlib import Path

import pytest

from cueref.live.server import LiveServer
from tests.live._live import standin_session, truth_source, unsure_first_contact
from tests.pipeline._standins import load_clip

CHROMIUM = Path("/usr/bin/chromium")
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
        "--disable-background-networking", "--disable-component-update", "--disable-sync"]
DOCS_IMAGES = Path(__file__).resolve().parents[2] / "docs" / "images"

playwright_api = pytest.importorskip("playwright.sync_api", reason="Playwright for Python is not installed (pip install -e '.[test]')")
expect = playwright_api.expect
if not CHROMIUM.exists() and not shutil.which("chromium"):
    pytest.skip("no Chromium here: install Debian's chromium package to run the browser tests", allow_module_level=True)


@pytest.fixture(scope="module")
def browser():
    with playwright_api.sync_playwright() as p:
        b = p.chromium.launch(executable_path=str(CHROMIUM if CHROMIUM.exists() else shutil.which("chromium")), args=ARGS)
        yield b
        b.close()


@pytest.fixture()
def images(tmp_path):
    return DOCS_IMAGES if os.environ.get("CUEREF_DOCS_IMAGES") == "1" else tmp_path


class Live:
    """A stand-in session served, refereeing in a thread; frames stop at ``gates`` until ``go()``."""

    def __init__(self, clip, gates):
        self.source, self.reader = truth_source(clip, gates)
        self.session = standin_session(clip, self.source)
        self.server = LiveServer(self.session, "127.0.0.1", 0).start()
        self.worker = threading.Thread(target=self.session.run, name="test-live-referee")
        self.worker.start()

    def wait_gate(self):
        assert self.reader.gate_reached.wait(30), "the frames never reached the gate"

    def close(self):
        self.session.stop()
        self.worker.join(10)
        self.server.stop()


def test_an_operator_answers_a_question_and_nominates_in_the_browser(browser, images):
    clip = unsure_first_contact(load_clip("brasileira/wrong-pocket"))  # at rest 7.90 s; shot 1 at 9.50 s
    live = Live(clip, gates=(8.6, 9.3, 11.0, 14.5))
    try:
        page = browser.new_page(viewport={"width": 1440, "height": 900})
        page.goto(f"http://127.0.0.1:{live.server.port}/")
        live.wait_gate()

        # the opening shot's call is a question: one click answers it
        page.wait_for_selector("#question:not([hidden])")
        assert "first contact red or pink" in page.inner_text("#question-text")
        assert page.inner_text("#call").startswith("Pending")
        page.screenshot(path=str(images / "live-console.png"))
        page.click("[data-answer=red]")
        page.wait_for_selector("#toast:not([hidden])")
        assert "answer given" in page.inner_text("#toast")
        live.reader.go()
        page.wait_for_selector("#question", state="hidden")
        call = page.inner_text("#call")
        assert "opening shot hit the red" in call and "12" in page.inner_text("#call-rules")
        live.wait_gate()

        # the nomination of shot 1: the ball by keyboard, the pocket by a click on the table
        page.keyboard.press("1")
        assert "chosen" in page.get_attribute("#nominate-balls [data-ball=red]", "class")
        page.click("#table [data-pocket=TR]")
        # the server has queued it (the first answer's toast may still be showing: wait for this one's)
        expect(page.locator("#toast")).to_contain_text("nomination given")
        live.reader.go()
        live.wait_gate()  # the strike at 9.50 s has been seen: the nomination is in the log before it
        expect(page.locator("#nomination-now")).to_contain_text("red into TR")
        live.reader.go()
        expect(page.locator("#calls li")).to_have_count(3, timeout=30000)
        assert "wrong pocket" in page.inner_text("#call").lower() or "4" in page.inner_text("#call-rules")
        assert "foul" in page.get_attribute("#call", "class")
        given = page.inner_text("#given")
        assert "answer" in given and "nomination ball=red pocket=TR" in given
        assert page.inner_text("#problems") == ""

        # the scoreboard: players, the score after the foul, the last call
        live.wait_gate()
        board = browser.new_page(viewport={"width": 1280, "height": 720})
        board.goto(f"http://127.0.0.1:{live.server.port}/scoreboard")
        board.wait_for_selector(".side .points")
        assert [n.strip() for n in board.locator(".side .name").all_inner_texts()] == ["A", "B"]
        assert board.locator(".side .points").all_inner_texts() == ["7", "0"]
        assert board.inner_text(".last-call").lower() == page.inner_text("#call").lower()
        board.screenshot(path=str(images / "live-scoreboard.png"))

        # undo the foul call with a reason: the points go back, on the console and on the scoreboard
        page.click("#undo")
        expect(page.locator("#toast")).to_contain_text("give the reason")
        page.fill("#undo-reason", "the referee saw the red nominated into BR")
        page.click("#undo")
        expect(page.locator("#toast")).to_contain_text("undo given")
        live.reader.go()
        expect(page.locator("#call")).to_contain_text("undo: the call on shot 1 is withdrawn (the referee saw")
        expect(board.locator(".side .points")).to_have_text(["0", "0"])
        transparent = browser.new_page()
        transparent.goto(f"http://127.0.0.1:{live.server.port}/scoreboard?transparent=1")
        transparent.wait_for_selector(".side .points")
        assert transparent.evaluate("getComputedStyle(document.body).backgroundColor") == "rgba(0, 0, 0, 0)"
    finally:
        live.close()
    decisions = list(reversed(live.session.board.calls))
    assert [c["shot"] for c in decisions] == [0, 0, 1, 1]
    assert decisions[2]["fouls"] == ["wrong_pocket"] and decisions[2]["next_player"] == "A"
    assert decisions[3]["explanation"].startswith("undo:")


def test_the_bar_billiards_scoreboard_shows_the_break_and_the_game_clock(browser, images):
    """bar-billiards/visit stopped at 12.5 s: A's break stands at 220 (two pots of shot 1 and two of shot
    2), nothing is banked yet, and the game clock started at the first break-off (2.9 s): 15 minutes less
    9.6 s are left."""
    clip = load_clip("bar-billiards/visit")
    live = Live(clip, gates=(12.5,))
    try:
        live.wait_gate()
        board = browser.new_page(viewport={"width": 1280, "height": 720})
        board.goto(f"http://127.0.0.1:{live.server.port}/scoreboard")
        expect(board.locator("#break")).to_have_text("A's break 220")
        assert board.locator(".side .points").all_inner_texts() == ["0", "0"]
        minutes, seconds = board.inner_text("#clock").split(":")
        assert minutes == "14" and 40 <= int(seconds) <= 50  # counted on in the browser between states
        assert "turn" in board.get_attribute(".side:first-child", "class")
        board.screenshot(path=str(images / "live-scoreboard-bar-billiards.png"))
    finally:
        live.close()
