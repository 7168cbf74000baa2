"""Worker processes for CPU-bound work (rendering articles), made with ``os.fork`` and ``os.pipe`` only.

Lambda has no ``/dev/shm``, so ``multiprocessing``'s queues, locks and semaphores (and the
``concurrent.futures`` process pool built on them) fail there. Plain pipes need nothing of the kind: each
child reads length-prefixed pickles of work from its own pipe and writes the results back on another, and
the parent hands a child new work only once it has read the child's last result, so neither side ever
waits on a full pipe the other is not reading.

The children are forks of the parent at the moment the pool starts: the function they run, and everything
it needs (the renderer, its caches, the settings), is already in their memory and is never pickled; only
the items and the results travel. A child runs nothing but that function and leaves with ``os._exit``,
never returning into the parent's code (its threads, atexit handlers and buffers are the parent's business).

A function may need an answer only the parent has (an image's stored key: the asset pass and its
connections live in the parent). Given ``answer``, the pool calls ``function(item, ask)``: in a child,
``ask(question)`` sends the question up the result pipe and waits for ``answer(item, question)`` on its
work pipe (the parent sends a child work only when it is idle, so the two never mix); in this process,
``ask`` calls ``answer`` directly. Either way the function sees the same answers.
"""

from __future__ import annotations

import contextlib
import functools
import gc
import os
import pickle
import selectors
import signal
import struct
import traceback
import warnings
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Any, Generic, TypeVar, cast

T = TypeVar("T")
R = TypeVar("R")

_LENGTH = struct.Struct("!Q")
# Results waiting for an earlier one, at most this many per process: bounds what the parent holds while
# one long item is still being worked on.
_AHEAD_PER_PROCESS = 4
# What a child sends up its result pipe: an item's outcome, or a question for the parent.
_OUTCOME, _QUESTION = 0, 1

Ask = Callable[[Any], Any]


class WorkerProcessLost(RuntimeError):
    """A worker process ended (killed, out of memory) before answering."""


class WorkerProcessError(RuntimeError):
    """The function raised in a worker process, and its exception could not be sent back as it was."""


def available_cpus() -> int:
    """The CPUs this process may run on (Lambda gives one per 1,769 MB of memory, up to six)."""
    try:
        return max(len(os.sched_getaffinity(0)), 1)
    except (AttributeError, OSError):  # not Linux
        return max(os.cpu_count() or 1, 1)


@dataclass
class _Child:
    pid: int
    tasks: int  # the write end of the child's work pipe
    results: int  # the read end of the child's result pipe
    busy: int | None = None  # the sequence number of the item it works on
    item: Any = None  # that item (the parent answers its questions)


class ForkPool(Generic[T, R]):
    """``processes`` forked workers running ``function``; ``map`` gives its results in the items' order.

    With ``processes`` below 2 nothing is forked and ``map`` calls ``function`` in this process (a
    single-CPU environment gains nothing from a child). Use as a context manager: leaving it ends the
    children (they exit on the end of their work pipe; killed when the block raised)."""

    def __init__(
        self,
        function: Callable[[T], R] | Callable[[T, Ask], R],
        processes: int,
        *,
        answer: Callable[[T, Any], Any] | None = None,
    ) -> None:
        """``answer``: when given, ``function`` is called as ``function(item, ask)`` (module docstring)."""
        self._answer = answer
        if answer is None:
            self._function = cast(Callable[[T], R], function)
        else:
            asking = cast(Callable[[T, Ask], R], function)
            self._function = lambda item: asking(item, functools.partial(answer, item))
        # What a child runs: with ``answer``, the function itself, given the child's ``ask``.
        self._child_function: Callable[..., Any] = self._function if answer is None else function
        self._processes = processes
        self._children: list[_Child] = []
        self._started = False
        self._closed = False

    @property
    def processes(self) -> int:
        """How many worker processes run the function (0: it runs in this process)."""
        return self._processes if self._processes >= 2 else 0

    def __enter__(self) -> ForkPool[T, R]:
        return self

    def __exit__(self, kind: object, exc: object, tb: object) -> None:
        self.close(kill=exc is not None)

    def map(self, items: Iterable[T]) -> Iterator[R]:
        """``function(item)`` for each item, in order, computed by the worker processes as the items come
        (an iterable that downloads as it goes keeps the processes busy while it does). An exception
        raised by the function is raised here, at its item's place."""
        if self.processes == 0:
            yield from map(self._function, items)
            return
        if self._closed:
            raise RuntimeError("the pool was closed: its processes are gone")
        self.start()
        try:
            yield from self._map(iter(items))
        except BaseException:
            # Children may still be working on items nobody will read (an exception, or the caller
            # stopped early): the pool cannot be used again, and they are stopped now.
            self.close(kill=True)
            raise

    def _map(self, items: Iterator[T]) -> Iterator[R]:
        selector = selectors.DefaultSelector()
        try:
            for child in self._children:
                selector.register(child.results, selectors.EVENT_READ, child)
            done: dict[int, tuple[bool, Any]] = {}
            sent = next_out = 0
            exhausted = False
            window = _AHEAD_PER_PROCESS * len(self._children)
            while True:
                # Work for every idle child, unless results are piling up behind a slow earlier item.
                for child in self._children:
                    if exhausted or child.busy is not None or sent - next_out >= window:
                        continue
                    try:
                        item = next(items)
                    except StopIteration:
                        exhausted = True
                        break
                    _send(child.tasks, pickle.dumps(item, protocol=pickle.HIGHEST_PROTOCOL))
                    child.busy, child.item, sent = sent, item, sent + 1
                while next_out in done:
                    ok, value = done.pop(next_out)
                    next_out += 1
                    if not ok:
                        raise value
                    yield value
                if exhausted and next_out == sent:
                    return
                if all(child.busy is None for child in self._children):
                    continue  # what was drained made room in the window: hand out more work first
                for key, _ in selector.select():
                    child = key.data
                    payload = _receive(child.results)
                    if payload is None or child.busy is None:
                        raise WorkerProcessLost(f"worker process {child.pid} ended without answering")
                    kind, message = pickle.loads(payload)  # noqa: S301 - our own child's pickle
                    if kind == _QUESTION:
                        self._reply(child, message)
                        continue
                    done[child.busy] = message
                    child.busy, child.item = None, None
        finally:
            selector.close()

    def _reply(self, child: _Child, question: Any) -> None:
        """Answer a child's question about the item it works on (an exception is raised in the child,
        at the question, as ``answer`` would raise it in this process)."""
        assert self._answer is not None  # a child asks only when the pool was given ``answer``
        try:
            reply: tuple[bool, Any] = (True, self._answer(child.item, question))
        except Exception as exc:  # noqa: BLE001 - raised in the child, where the function asked
            reply = (False, exc)
        _send(child.tasks, pickle.dumps(reply, protocol=pickle.HIGHEST_PROTOCOL))

    def start(self) -> None:
        """Fork the children now (else at the first ``map``): before this process holds much, so
        they share little with it that it later lets go of (a page a child still maps stays its own)."""
        if self._started or self.processes == 0:
            return
        self._started = True
        parent_ends: list[int] = []
        # Everything this process holds now is moved out of the collector's sight while the children
        # are made: their collections then never walk (and write to, copying each page) the objects
        # inherited from here, which costs them CPU and memory. This process takes them back after.
        gc.freeze()
        try:
            self._fork_children(parent_ends)
        finally:
            gc.unfreeze()

    def _fork_children(self, parent_ends: list[int]) -> None:
        for _ in range(self._processes):
            task_read, task_write = os.pipe()
            result_read, result_write = os.pipe()
            with warnings.catch_warnings():
                # Python 3.12+ warns that forking a process with threads may deadlock the child on a lock
                # another thread held. The child touches no such lock: it runs the function (rendering,
                # which neither logs nor does I/O) and writes to its pipe.
                warnings.simplefilter("ignore", DeprecationWarning)
                pid = os.fork()
            if pid == 0:  # the child
                for fd in (*parent_ends, task_write, result_read):
                    os.close(fd)
                _serve(self._child_function, task_read, result_write, asks=self._answer is not None)
            os.close(task_read)
            os.close(result_write)
            parent_ends += [task_write, result_read]
            self._children.append(_Child(pid, task_write, result_read))

    def close(self, *, kill: bool = False) -> None:
        """End the children and reap them (``kill``: at once, without letting them finish an item)."""
        for child in self._children:
            if kill:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(child.pid, signal.SIGKILL)
            for fd in (child.tasks, child.results):
                with contextlib.suppress(OSError):
                    os.close(fd)
        for child in self._children:
            with contextlib.suppress(ChildProcessError):
                os.waitpid(child.pid, 0)
        self._children = []
        self._closed = self._started


def _serve(function: Callable[..., Any], tasks: int, results: int, *, asks: bool) -> None:
    """The child's loop: an item in, its result (or exception) out, until the work pipe ends. Never
    returns. With ``asks``, the function is given ``ask`` (a question up, its answer back)."""

    def ask(question: Any) -> Any:
        _send(results, pickle.dumps((_QUESTION, question), protocol=pickle.HIGHEST_PROTOCOL))
        reply = _receive(tasks)
        if reply is None:
            raise WorkerProcessLost("the parent went away")
        ok, value = pickle.loads(reply)  # noqa: S301 - our parent's pickle
        if not ok:
            raise value
        return value

    status = 0
    try:
        while (payload := _receive(tasks)) is not None:
            item = pickle.loads(payload)  # noqa: S301 - our parent's pickle
            try:
                answer: tuple[bool, Any] = (True, function(item, ask) if asks else function(item))
            except Exception as exc:  # noqa: BLE001 - sent back and raised in the parent, at the item's place
                answer = (False, exc)
            try:
                data = pickle.dumps((_OUTCOME, answer), protocol=pickle.HIGHEST_PROTOCOL)
            except Exception:  # noqa: BLE001 - an exception (or result) that does not pickle: its text instead
                text = "".join(traceback.format_exception(answer[1])) if not answer[0] else "unpicklable"
                failed = (_OUTCOME, (False, WorkerProcessError(text)))
                data = pickle.dumps(failed, protocol=pickle.HIGHEST_PROTOCOL)
            _send(results, data)
    except BaseException:  # noqa: BLE001 - the parent went away (broken pipe), or a stop signal
        status = 1
    finally:
        os._exit(status)


def _send(fd: int, data: bytes) -> None:
    view = memoryview(_LENGTH.pack(len(data)) + data)
    while view:
        view = view[os.write(fd, view) :]


def _receive(fd: int) -> bytes | None:
    """One framed message, or None at the end of the pipe."""
    head = _read_exactly(fd, _LENGTH.size)
    if head is None:
        return None
    (length,) = _LENGTH.unpack(head)
    body = _read_exactly(fd, length)
    if body is None:
        return None
    return body


def _read_exactly(fd: int, n: int) -> bytes | None:
    chunks = bytearray()
    while len(chunks) < n:
        chunk = os.read(fd, min(n - len(chunks), 1 << 20))
        if not chunk:
            return None
        chunks += chunk
    return bytes(chunks)
