"""`lakeplan explain`'s HTML page in a real headless browser: Debian's chromium driven by playwright (offline: never
playwright's own browser download). The page shows the example's DAG without console errors, and a click on a
model shows its details. Its screenshot goes beside the page, in target/ (docs/explain.png is a copy of one: a test
run leaves the repository's files as they were)."""

import shutil

import pytest

from dbt_lakeplan.cli import main
from tests.conftest import REPO

CHROMIUM = "/usr/bin/chromium"
# PLATFORM.md: without these (and a fresh profile) chromium tries the network
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking",
         "--disable-component-update", "--disable-sync"]  # fmt: skip


@pytest.fixture(scope="module")
def page_path(built):
    assert main(["explain", "--project-dir", str(REPO), "--no-progress"]) == 0
    return REPO / "target" / "lakeplan_explain.html"


def test_the_page_shows_the_dag_and_a_models_details(page_path, tmp_path):
    from playwright.sync_api import sync_playwright

    assert shutil.which("chromium"), "Debian's chromium is missing: `make setup` as root installs it (apt-get install chromium)"
    errors = []
    with sync_playwright() as driver:
        browser = driver.chromium.launch_persistent_context(
            str(tmp_path / "profile"), executable_path=CHROMIUM, args=FLAGS, headless=True,
            viewport={"width": 1500, "height": 900},
        )  # fmt: skip
        page = browser.new_page()
        page.on("console", lambda message: errors.append(message.text) if message.type == "error" else None)
        page.on("pageerror", lambda error: errors.append(str(error)))
        page.goto(page_path.as_uri())
        assert page.locator("svg#dag .node.model").count() == 11  # the example's models
        assert page.locator('svg#dag .node[data-id="source.lakeplan.tpch.lineitem"]').count() == 1
        assert page.locator("svg#dag .edge").count() > 10
        page.locator('svg#dag .node[data-id="model.lakeplan.customer_360"]').click()
        details = page.locator("#details").inner_text()
        assert "customer_360" in details and "write groups" in details and "inputKind" in details
        assert "next run: run" in details
        page.screenshot(path=str(page_path.with_suffix(".png")), full_page=False)
        browser.close()
    assert errors == []
