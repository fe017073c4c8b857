"""A screenshot of `lakeplan explain`'s page in Debian's chromium, driven by playwright (offline: never playwright's
own browser download). `make explain-png` writes docs/explain.png with it from the example's page, after `make run`:

    python scripts/explain_screenshot.py target/lakeplan_explain.html docs/explain.png [--click <unique_id>]

tests/integration/test_explain_browser.py opens the page the same way (`opened`)."""

from __future__ import annotations

import argparse
import contextlib
import tempfile
from pathlib import Path
from typing import Iterator

CHROMIUM = "/usr/bin/chromium"
# PLATFORM.md: without these (and a fresh profile) chromium tries the network
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking",
         "--disable-component-update", "--disable-sync"]  # fmt: skip
VIEWPORT = {"width": 1500, "height": 900}


@contextlib.contextmanager
def opened(page_path: Path, errors: list[str]) -> Iterator:
    """The page open in a fresh headless chromium; console errors and uncaught exceptions go into `errors`."""
    from playwright.sync_api import sync_playwright

    with tempfile.TemporaryDirectory() as profile, sync_playwright() as driver:
        browser = driver.chromium.launch_persistent_context(
            profile, executable_path=CHROMIUM, args=FLAGS, headless=True, viewport=VIEWPORT)
        try:
            page = browser.new_page()
            page.on("console", lambda message: errors.append(message.text) if message.type == "error" else None)
            page.on("pageerror", lambda error: errors.append(str(error)))
            page.goto(Path(page_path).resolve().as_uri())
            yield page
        finally:
            browser.close()


def screenshot(page_path: Path, png: Path, click: str | None) -> list[str]:
    """Saves the page (with `click`'s details shown) as `png`; returns the page's errors."""
    errors: list[str] = []
    with opened(page_path, errors) as page:
        if click:
            page.locator(f'svg#dag .node[data-id="{click}"]').click()
        page.screenshot(path=str(png), full_page=False)
    return errors


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("page", type=Path)
    parser.add_argument("png", type=Path)
    parser.add_argument("--click", default="model.lakeplan.customer_360", help="the node whose details are shown")
    args = parser.parse_args()
    errors = screenshot(args.page, args.png, args.click)
    for error in errors:
        print(f"explain_screenshot: the page reported: {error}")
    print(f"wrote {args.png}")
    return 1 if errors else 0


if __name__ == "__main__":
    raise SystemExit(main())
