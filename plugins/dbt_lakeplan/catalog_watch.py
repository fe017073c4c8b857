"""A shared catalog whose database stops answering while a statement runs, told as it happens and when it ends.

Spark's Hive client waits for the metastore database a bounded time (profiles/shared-catalog.conf: HikariCP's
`connectionWaitTimeout` for each try of a call, Hive's `hive.hmshandler.retry.attempts` tries more,
`retry.interval` apart), and that wait says nothing: Hive's own log lines are off. While a statement of a shared
catalog's run is under way, a thread asks the database's address every few seconds; when it stops answering, the
user is told the address, that Spark retries, and until when; when it answers again, that the run goes on. A statement
that fails while it did not answer is told as the catalog's outage (`lost_sentence`), naming the model and the fix.
"""

from __future__ import annotations

import functools
import re
import threading
import time
from dataclasses import dataclass, field
from typing import Callable

from dbt_lakeplan.metastore_lock import CATALOG_FIX, answers, catalog_named, shared_catalog_address, spark_settings

PROBE_EVERY_S = 2.0
# Hive 2.3's defaults where the settings name none
HIVE_ATTEMPTS, HIVE_INTERVAL_MS = 10, 2000
TIME_UNITS_MS = {"ms": 1, "s": 1000, "sec": 1000, "m": 60000, "min": 60000}


def setting(text: str, name: str) -> str | None:
    """A Spark property's value in a spark-defaults.conf text; None where it is not set."""
    found = re.search(rf"^\s*{re.escape(name)}\s+(\S+)\s*$", text, re.MULTILINE)
    return found.group(1) if found else None


def milliseconds(value: str) -> float:
    """A Hive time value (`2000ms`, `2s`, `2000`: milliseconds) in milliseconds."""
    number, unit = re.fullmatch(r"(\d+(?:\.\d+)?)\s*([a-z]*)", value.strip().lower()).groups()
    return float(number) * TIME_UNITS_MS.get(unit or "ms", 1)


def wait_bound_s(text: str) -> float | None:
    """How long Spark's Hive client waits for a metastore database that does not answer, by the settings `text`:
    every try waits the pool's connectionWaitTimeout, the tries `retry.interval` apart; None where no pool wait is
    set (BoneCP, Hive 2.3's default pool: it waits for as long as the database is down)."""
    wait = setting(text, "spark.hadoop.datanucleus.connectionPool.connectionWaitTimeout")
    if setting(text, "spark.hadoop.datanucleus.connectionPoolingType") != "HikariCP" or wait is None:
        return None
    attempts = int(setting(text, "spark.hadoop.hive.hmshandler.retry.attempts") or HIVE_ATTEMPTS)
    interval = setting(text, "spark.hadoop.hive.hmshandler.retry.interval")
    interval_ms = milliseconds(interval) if interval else HIVE_INTERVAL_MS
    return ((attempts + 1) * float(wait) + attempts * interval_ms) / 1000


@dataclass(frozen=True)
class SharedCatalog:
    host: str
    port: int
    conf_dir: str
    bound_s: float | None

    @property
    def named(self) -> str:
        return catalog_named(self.host, self.port, self.conf_dir)


@functools.lru_cache(maxsize=None)
def shared_catalog(conf_dir: str | None) -> SharedCatalog | None:
    """The shared catalog the settings in `conf_dir` name; None for the embedded one. Read once per folder: a process's
    Spark keeps the settings it started with, and every statement of a run asks."""
    address = shared_catalog_address(conf_dir)
    if address is None:
        return None
    return SharedCatalog(*address, conf_dir, wait_bound_s(spark_settings(conf_dir)))


def retrying_sentence(catalog: SharedCatalog, model: str, since: float) -> str:
    """What the user is told when the catalog's database stops answering during `model`'s statement."""
    if catalog.bound_s is None:
        until = "for as long as it is down (no wait limit is set: docs/team.md)"
    else:
        until = (f"until {time.strftime('%H:%M:%S', time.localtime(since + catalog.bound_s))} "
                 f"({catalog.bound_s:g} s), then {model} stops")
    return f"The {catalog.named} does not answer; Spark retries {model}'s calls to it {until}."


def back_sentence(catalog: SharedCatalog, model: str, since: float, now: float) -> str:
    return f"The {catalog.named} answers again after {now - since:.0f} s; {model} goes on."


def lost_sentence(catalog: SharedCatalog, model: str) -> str:
    """A statement of `model` that failed while the catalog's database did not answer."""
    within = f" within {catalog.bound_s:g} s" if catalog.bound_s is not None else ""
    return (f"{model} stopped: the {catalog.named} stopped answering while it ran and did not "
            f"answer again{within}, so Spark could not reach the catalog (no write of it is half-done: each table "
            f"is as it was or holds its write whole). {CATALOG_FIX}")


@dataclass
class Watch:
    """Asks the catalog's database every PROBE_EVERY_S while a statement runs (a thread of its own), telling `say`
    when it stops answering and when it answers again. `down_since` is set while it does not answer."""

    catalog: SharedCatalog
    model: str
    say: Callable[[str], None]
    down_since: float | None = None
    stopped: threading.Event = field(default_factory=threading.Event)
    probing: threading.Lock = field(default_factory=threading.Lock)

    def __enter__(self) -> Watch:
        threading.Thread(target=self._run, name="lakeplan-catalog-watch", daemon=True).start()
        return self

    def __exit__(self, failed, *exc) -> None:
        self.stopped.set()
        if failed is None and self.down_since is not None:  # the statement went on before a probe saw it answer
            self.probe()

    def _run(self) -> None:
        while not self.stopped.wait(PROBE_EVERY_S):
            self.probe()

    def probe(self) -> None:
        with self.probing:  # the thread's and the statement's end's, told once
            self._probe()

    def _probe(self) -> None:
        up, now = answers(self.catalog.host, self.catalog.port, timeout_s=PROBE_EVERY_S), time.time()
        if not up and self.down_since is None:
            self.down_since = now
            self.say(retrying_sentence(self.catalog, self.model, now))
        elif up and self.down_since is not None:
            self.say(back_sentence(self.catalog, self.model, self.down_since, now))
            self.down_since = None

    def lost(self) -> str | None:
        """The sentence for a statement that failed while the catalog's database did not answer (asked once more
        now); None where it answered."""
        if self.down_since is None and answers(self.catalog.host, self.catalog.port):
            return None
        return lost_sentence(self.catalog, self.model)
