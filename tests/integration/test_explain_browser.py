"""`lakeplan explain`'s HTML page in a real headless browser: Debian's chromium driven by playwright (offline: never
playwright's own browser download), opened as scripts/explain_screenshot.py opens it (`make explain-png` writes
docs/explain.png that way; a test run leaves the repository's files as they were). On the example and on a project
whose models read a seed and a source: no console errors, every input of a selected model is a node, no edge passes
through a box that is not its end, no element is wider than its pane, each legend entry has its swatch, and a click
on a model shows its details."""

import importlib.util
import shutil

import pytest

from dbt_lakeplan.cli import main
from tests.conftest import REPO

spec = importlib.util.spec_from_file_location("explain_screenshot", REPO / "scripts" / "explain_screenshot.py")
explain_screenshot = importlib.util.module_from_spec(spec)
spec.loader.exec_module(explain_screenshot)

# A member's source and a seed both feed the target, and the seed also feeds a model the second member reads:
# issue 44's shape, where an edge was drawn through another model's box and the seed had no node.
SEEDED = {
    "seeds/orders_seed.csv": "order_id,customer_id,amount\n1,1,2.5\n2,2,3.5\n",
    "seeds/tickets_seed.csv": "ticket_id,customer_id,status\n1,1,open\n2,2,closed\n",
    "models/sources.yml": "version: 2\nsources:\n  - name: shop\n    schema: lakeplan_explain_page\n"
                          "    tables:\n      - {name: orders, identifier: orders_seed}\n",
    "models/tickets_current.sql": "select customer_id, max(status) as status from {{ ref('tickets_seed') }} group by 1",
    "models/customer_wide.sql": "{{ partial_update_target() }}",
    "models/customer_wide.yml": "version: 2\nmodels:\n  - name: customer_wide\n    config: {unique_key: customer_id}\n"
                                "    columns:\n      - {name: customer_id, data_type: int}\n"
                                "      - {name: order_total, data_type: double}\n"
                                "      - {name: status, data_type: string}\n",
    "models/wide_orders.sql": "{{ config(partial_update_target='customer_wide') }}\nselect customer_id, "
                              "sum(amount) as order_total from {{ source('shop', 'orders') }} group by 1",
    "models/wide_status.sql": "{{ config(partial_update_target='customer_wide') }}\n"
                              "select t.customer_id, t.status from {{ ref('tickets_current') }} as t\n"
                              "join {{ ref('tickets_seed') }} as s on s.customer_id = t.customer_id",
}  # fmt: skip

# Everything the browser checks, in one pass over the page (returns the problems found).
CHECKS = """() => {
  const problems = [];
  const report = JSON.parse(document.getElementById('report').textContent);
  const node = uid => document.querySelector(`svg#dag .node[data-id="${CSS.escape(uid)}"]`);
  for (const m of report.models) for (const uid of m.inputs)
    if (!node(uid)) problems.push(`input ${uid} of ${m.name} has no node`);
  const boxes = [...document.querySelectorAll('svg#dag .node')].map(g => {
    const r = g.querySelector('rect');
    return {uid: g.dataset.id, x: +r.getAttribute('x'), y: +r.getAttribute('y'),
            w: +r.getAttribute('width'), h: +r.getAttribute('height')};
  });
  for (const edge of document.querySelectorAll('svg#dag .edge')) {
    const length = edge.getTotalLength();
    for (let at = 0; at <= length; at += 3) {
      const p = edge.getPointAtLength(at);
      const hit = boxes.find(b => b.uid !== edge.dataset.from && b.uid !== edge.dataset.to &&
        p.x > b.x + 1 && p.x < b.x + b.w - 1 && p.y > b.y + 1 && p.y < b.y + b.h - 1);
      if (hit) { problems.push(`edge ${edge.dataset.from} -> ${edge.dataset.to} passes through ${hit.uid}`); break; }
    }
  }
  for (const key of document.querySelectorAll('.legend .key')) {
    const swatch = key.querySelector('svg.swatch');
    if (!swatch || swatch.getBoundingClientRect().width < 10 || !key.textContent.trim())
      problems.push(`legend entry without a swatch: ${key.textContent}`);
  }
  return problems;
}"""
# After a click on each node: any element whose right edge is past its pane's (the pane would scroll sideways).
OVERFLOWS = """() => {
  const found = [];
  for (const pane of document.querySelectorAll('#graph, #details')) {
    const right = pane.getBoundingClientRect().left + pane.clientWidth + 1;
    for (const el of pane.querySelectorAll('*'))
      if (el.getBoundingClientRect().right > right)
        found.push(`${pane.id}: <${el.tagName}> ${el.textContent.slice(0, 40)}`);
    if (pane.scrollWidth > pane.clientWidth + 1) found.push(`${pane.id} scrolls sideways`);
  }
  return found;
}"""


@pytest.fixture(scope="module")
def example_page(built):
    assert main(["explain", "--project-dir", str(REPO), "--no-progress"]) == 0
    return REPO / "target" / "lakeplan_explain.html"


@pytest.fixture(scope="module")
def seeded_page(make_project):
    project = make_project("explain_page", SEEDED)
    project.run("seed")
    project.run("run")
    assert main(["explain", "--project-dir", str(project.path), "--no-progress"]) == 0
    return project.path / "target" / "lakeplan_explain.html"


def check_page(page_path) -> tuple[list[str], list[str], dict[str, str]]:
    """The page's problems, its console errors, and the details pane's text after a click on each node."""
    assert shutil.which("chromium"), "Debian's chromium is missing: `make setup` as root installs it"
    errors, problems, details = [], [], {}
    with explain_screenshot.opened(page_path, errors) as page:
        problems += page.evaluate(CHECKS)
        for uid in page.eval_on_selector_all("svg#dag .node", "nodes => nodes.map(n => n.dataset.id)"):
            page.locator(f'svg#dag .node[data-id="{uid}"]').click()
            details[uid] = page.locator("#details").inner_text()
            problems += [f"after a click on {uid}: {one}" for one in page.evaluate(OVERFLOWS)]
    return problems, errors, details


def test_the_example_page_shows_the_dag_and_a_models_details(example_page):
    problems, errors, details = check_page(example_page)
    assert problems == [] and errors == []
    assert sum(uid.startswith("model.") for uid in details) == 11  # the example's models
    assert "source.lakeplan.tpch.lineitem" in details
    c360 = details["model.lakeplan.customer_360"]
    assert "write groups" in c360 and "inputKind" in c360 and "next run: run" in c360


def test_a_page_with_a_seed_input_draws_it_and_routes_edges_around_boxes(seeded_page):
    problems, errors, details = check_page(seeded_page)
    assert problems == [] and errors == []
    assert {"seed.lakeplan.tickets_seed", "source.lakeplan.shop.orders"} <= set(details)
    # one name per input: the source is shop.orders in the graph and in every model's details
    assert "shop.orders" in details["model.lakeplan.customer_wide"]  # its members are inlined: not models of their own
    assert not [uid for uid, text in details.items() if "source.lakeplan" in text]
    # a model that reads no source says so, without an empty table under its heading (a new user's trial)
    assert "sources: none" in details["model.lakeplan.tickets_current"]
    assert "scan_parallelism" not in details["model.lakeplan.tickets_current"]
