"""The concurrency tests' harness stops at the first writer that ends (tests/concurrency/harness.py release,
writer.py meet): the others do not wait at a round's barrier for it, and every later case fails at once."""

import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.concurrency.harness import HERE, release, start_at_barrier

# a writer waiting at a round's barrier for the other, as writer.dbt_rounds does; and one that ends with an error
WAITS = ("import sys; sys.path.insert(0, sys.argv[1]); from pathlib import Path; from writer import meet; "
         "meet(Path(sys.argv[2]), 'round-0'); print('done case')")
ENDS = "import sys; print('committed 3 of 25', flush=True); sys.exit('dbt run of writer 1 failed')"


def test_the_first_writer_that_ends_stops_the_others_and_every_later_case(tmp_path):
    writers = []
    for n, command in enumerate([[WAITS, str(HERE), str(tmp_path)], [ENDS]]):
        (tmp_path / f"ready-{n}").touch()
        writers.append(subprocess.Popen([sys.executable, "-c", *command], stdout=subprocess.PIPE, text=True,
                                        stderr=(tmp_path / f"{n}.log").open("w")))
    started = time.monotonic()
    with pytest.raises(AssertionError, match=r"process 1 ended \(code 1\) in case, before 'done case'; its last "
                                             r"lines:\ncommitted 3 of 25\n"):
        release(writers, tmp_path, "case")
    assert writers[0].wait(timeout=60) != 0  # it left the barrier
    assert time.monotonic() - started < 60  # not meet's 600 s
    with pytest.raises(AssertionError, match="the writers stopped in an earlier case: process 1 ended"):
        release(writers, tmp_path, "next")


def test_a_writer_whose_start_fails_stops_every_writer_it_started_with(tmp_path):
    """One writer ends before it is ready: the others, still starting (one never ready), are stopped before the
    failure is raised, not left running for a fixture that never got them."""
    pid = tmp_path / "pid"
    starting = f"import os, time; open({str(pid)!r}, 'w').write(str(os.getpid())); time.sleep(600)"
    fails = (f"import os, sys, time\nwhile not os.path.exists({str(pid)!r}): time.sleep(0.05)\n"
             "sys.exit('RuntimeError: Spark did not start')")  # once the other has started
    with pytest.raises(AssertionError, match="Spark did not start"):
        start_at_barrier([[sys.executable, "-c", starting], [sys.executable, "-c", fails]], tmp_path, tmp_path / "b",
                         timeout=120)
    assert not Path(f"/proc/{pid.read_text()}").exists()  # stopped and reaped
