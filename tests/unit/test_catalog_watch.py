"""The shared catalog's wait bound read from its settings, and what a run is told while its database is down."""

import socket
from pathlib import Path

from dbt_lakeplan.catalog_watch import (SharedCatalog, Watch, lost_sentence, milliseconds, retrying_sentence,
                                        wait_bound_s)

REPO = Path(__file__).resolve().parents[2]


def test_the_shared_catalog_settings_bound_the_wait_and_boneCP_does_not():
    assert wait_bound_s((REPO / "profiles" / "shared-catalog.conf").read_text()) == 58  # 5 x 10 s + 4 x 2 s
    assert wait_bound_s("spark.hadoop.datanucleus.connectionPoolingType BONECP\n") is None
    hikari = ("spark.hadoop.datanucleus.connectionPoolingType HikariCP\n"
              "spark.hadoop.datanucleus.connectionPool.connectionWaitTimeout 5000\n")
    assert wait_bound_s(hikari) == 11 * 5 + 10 * 2  # Hive's default tries and interval
    assert milliseconds("2s") == milliseconds("2000ms") == milliseconds("2000") == 2000


def test_a_watch_tells_when_the_database_stops_and_starts_answering(tmp_path):
    listening = socket.socket()
    listening.bind(("127.0.0.1", 0))
    listening.listen()
    port = listening.getsockname()[1]
    catalog = SharedCatalog("127.0.0.1", port, str(tmp_path), 58.0)
    said = []
    watch = Watch(catalog, "`totals`", said.append)
    watch.probe()
    assert said == [] and watch.lost() is None
    listening.close()
    watch.probe()
    watch.probe()  # told once
    assert len(said) == 1 and said[0].startswith(f"The shared catalog's metastore database at 127.0.0.1:{port} (the "
                                                 f"ConnectionURL in {tmp_path}/spark-defaults.conf) does not answer; "
                                                 "Spark retries `totals`'s calls to it until ")
    assert said[0].endswith(" (58 s), then `totals` stops.")
    assert watch.lost() == lost_sentence(catalog, "`totals`")
    assert watch.lost().startswith("`totals` stopped: the shared catalog's metastore database at 127.0.0.1:")
    assert watch.lost().endswith("Fix: start it with `make catalog-up` (or point that URL at a running PostgreSQL), "
                                 "then rerun.")
    with socket.socket() as again:
        again.bind(("127.0.0.1", port))
        again.listen()
        watch.__exit__(None, None, None)  # a statement that went on before the thread's next probe
    assert said[1].endswith("answers again after 0 s; `totals` goes on.")


def test_without_a_bound_the_user_is_told_it_waits_for_as_long_as_it_is_down(tmp_path):
    catalog = SharedCatalog("127.0.0.1", 5433, str(tmp_path), None)
    assert retrying_sentence(catalog, "`totals`", 0).endswith("for as long as it is down (no wait limit is set: "
                                                              "docs/team.md).")
