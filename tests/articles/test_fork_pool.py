"""Worker processes made with fork and pipes only: results in order, errors at their place, children
reaped, and nothing of multiprocessing (Lambda has no /dev/shm for its semaphores)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

from function.articles.fork_pool import ForkPool, WorkerProcessLost, available_cpus

ROOT = Path(__file__).resolve().parents[2]


def square_with_pid(x: int) -> tuple[int, int]:
    return x * x, os.getpid()


def fail_on_seven(x: int) -> int:
    if x == 7:
        raise ValueError("seven is refused")
    return x


def triple(data: bytes) -> bytes:
    return data * 3


def reaped(pool: ForkPool[Any, Any], pids: list[int]) -> bool:
    """Whether every one of the pool's worker processes is gone and reaped (only ours are asked about:
    other fixtures' children are left alone)."""
    for pid in pids:
        try:
            os.waitpid(pid, os.WNOHANG)
        except ChildProcessError:
            continue  # already reaped
        return False
    return True


def pids_of(pool: ForkPool[Any, Any]) -> list[int]:
    return [child.pid for child in pool._children]


def test_results_come_in_order_from_other_processes() -> None:
    with ForkPool(square_with_pid, 2) as pool:
        results = list(pool.map(range(50)))
        pids = pids_of(pool)
    assert [value for value, _ in results] == [x * x for x in range(50)]
    workers = {pid for _, pid in results}
    assert os.getpid() not in workers and workers <= set(pids) and len(pids) == 2
    assert reaped(pool, pids)


def test_large_items_and_results_pass_through_the_pipes_whole() -> None:
    items = [bytes([i]) * (100_000 + 7_919 * i) for i in range(20)]  # each past a pipe's 64 KB buffer
    with ForkPool(triple, 2) as pool:
        assert list(pool.map(items)) == [item * 3 for item in items]


def test_an_exception_is_raised_at_its_item_and_the_children_are_stopped() -> None:
    seen: list[int] = []
    with ForkPool(fail_on_seven, 2) as pool:
        with pytest.raises(ValueError, match="seven is refused"):
            for value in pool.map(range(20)):
                pids = pids_of(pool)
                seen.append(value)
    assert seen == list(range(7))
    assert reaped(pool, pids)


def test_a_worker_killed_midway_is_an_error_not_a_hang() -> None:
    def die_on_three(x: int) -> int:
        if x == 3:
            os.kill(os.getpid(), signal.SIGKILL)
        return x

    pids: list[int] = []
    with ForkPool(die_on_three, 2) as pool, pytest.raises(WorkerProcessLost):
        for _ in pool.map(range(10)):
            pids = pids or pids_of(pool)
    assert len(pids) == 2 and reaped(pool, pids)


def test_one_process_means_no_fork() -> None:
    with ForkPool(square_with_pid, 1) as pool:
        results = list(pool.map(range(3)))
    assert pool.processes == 0
    assert {pid for _, pid in results} == {os.getpid()}


def test_the_cpu_count_is_the_affinity_of_this_process() -> None:
    assert available_cpus() == len(os.sched_getaffinity(0))


def test_it_works_without_multiprocessing_or_dev_shm() -> None:
    # GIVEN an interpreter where multiprocessing cannot be imported and any use of /dev/shm (where its
    # semaphores live) fails, as in Lambda; every fork and pipe is recorded
    script = textwrap.dedent(
        """
        import sys
        sys.modules["multiprocessing"] = None
        sys.modules["_multiprocessing"] = None
        calls = []

        def audit(event, args):
            if event == "open" and str(args[0]).startswith("/dev/shm"):
                raise PermissionError("no /dev/shm here")
            if event in ("os.fork", "os.posix_spawn", "subprocess.Popen"):
                calls.append(event)

        sys.addaudithook(audit)
        import os
        from function.articles.fork_pool import ForkPool
        with ForkPool(lambda x: (x + 1, os.getpid()), 2) as pool:
            results = list(pool.map(range(30)))
        assert [v for v, _ in results] == list(range(1, 31))
        assert os.getpid() not in {pid for _, pid in results}
        print(",".join(calls))
        """
    )
    # WHEN the pool runs there
    done = subprocess.run(
        [sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, timeout=120, check=False
    )
    # THEN it works, and the only process calls were two forks
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "os.fork,os.fork"


def cube_of_the_answer(x: int, ask: Any) -> tuple[int, int]:
    """Needs the parent's answer for ``x``; returns it cubed and where it ran."""
    return ask(f"value of {x}") ** 3, os.getpid()


def test_a_worker_process_asks_the_parent_and_gets_its_answer() -> None:
    # GIVEN answers only the parent holds (its state changes as it answers)
    asked: list[tuple[int, str]] = []

    def answer(item: int, question: str) -> int:
        asked.append((item, question))
        return item + 1

    # WHEN the children compute with them
    with ForkPool(cube_of_the_answer, 2, answer=answer) as pool:
        results = list(pool.map(range(20)))
    # THEN each item got the answer to its own question, computed in the parent
    assert [value for value, _ in results] == [(x + 1) ** 3 for x in range(20)]
    assert os.getpid() not in {pid for _, pid in results}
    assert sorted(asked) == [(x, f"value of {x}") for x in range(20)]


def test_an_answer_that_raises_raises_at_its_item_as_it_does_in_this_process() -> None:
    def answer(item: int, question: str) -> int:
        if item == 3:
            raise LookupError("no answer for three")
        return item

    for processes in (2, 1):
        with ForkPool(cube_of_the_answer, processes, answer=answer) as pool:
            results = pool.map(range(6))
            assert [value for value, _ in (next(results) for _ in range(3))] == [0, 1, 8]
            with pytest.raises(LookupError, match="no answer for three"):
                next(results)


def test_a_closed_pool_refuses_more_work_instead_of_waiting_forever() -> None:
    with ForkPool(square_with_pid, 2) as pool:
        assert [value for value, _ in pool.map(range(3))] == [0, 1, 4]
        pool.close()
        with pytest.raises(RuntimeError, match="closed"):
            list(pool.map(range(3)))


def test_a_pool_serves_several_maps_with_the_same_processes() -> None:
    with ForkPool(square_with_pid, 2) as pool:
        pool.start()
        pids = pids_of(pool)
        first = list(pool.map(range(10)))
        second = list(pool.map(range(10, 20)))
    assert [v for v, _ in first + second] == [x * x for x in range(20)]
    assert {pid for _, pid in first + second} <= set(pids) and len(pids) == 2
