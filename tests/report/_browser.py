"""Headless Chromium for the report tests and the bench: Debian's ``chromium`` driven by Playwright
(never a downloaded browser), and what the page reports about itself."""

from __future__ import annotations

import shutil
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

CHROMIUM = Path("/usr/bin/chromium")
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
        "--disable-component-update", "--disable-sync", "--autoplay-policy=no-user-gesture-required"]


def missing() -> str | None:
    """Why no browser test can run here, or None."""
    if not CHROMIUM.exists() and shutil.which("chromium") is None:
        return "headless Chromium is not installed (Debian package chromium, /usr/bin/chromium)"
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        return "Playwright for Python is not installed (pip install -e '.[test]')"
    return None


@contextmanager
def page(width: int = 1400, height: int = 900) -> Iterator[tuple[object, list[str]]]:
    """A fresh page and the list its console errors and page errors go to."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM if CHROMIUM.exists() else shutil.which("chromium")), args=ARGS)
        try:
            pg = browser.new_page(viewport={"width": width, "height": height})
            errors: list[str] = []
            pg.on("console", lambda m: errors.append(f"console {m.type}: {m.text}") if m.type == "error" else None)
            pg.on("pageerror", lambda e: errors.append(f"page error: {e}"))
            yield pg, errors
        finally:
            browser.close()


# the page's own measure of how long it took: navigation timing, the first paint, and opening a shot
TIMING_JS = """() => {
  const nav = performance.getEntriesByType('navigation')[0];
  const paint = performance.getEntriesByType('paint').find(p => p.name === 'first-contentful-paint');
  return {dom_ms: nav.domContentLoadedEventEnd, load_ms: nav.loadEventEnd, paint_ms: paint ? paint.startTime : null,
          bytes: nav.transferSize || nav.encodedBodySize, rows: document.querySelectorAll('#shots li').length};
}"""

OPEN_SHOT_JS = """async (n) => {
  const row = document.getElementById('shot-' + n);
  const t0 = performance.now();
  row.scrollIntoView({block: 'center'});
  row.click();
  await new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)));
  return {ms: performance.now() - t0, svg: !!document.querySelector('#diagram svg'), t: document.getElementById('video').currentTime};
}"""
