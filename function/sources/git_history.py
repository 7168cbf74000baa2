"""When each file of a folder was added, from its git history: one ``git log`` for the whole folder.

Zenn keeps an article's publication date on its own servers, so a Zenn repository's files carry none; its
history does. A file's date is the author date of the commit that added it, following renames: a file
renamed (or moved) inside the folder keeps the date its first name was added at. The author date, not
the committer date: a rebase or a cherry-pick rewrites the second, never the first.

Decisions:

* One ``git log --reverse --name-status -M`` over the folder, oldest commit first: an addition sets the
  path's date, a rename carries the old path's date to the new one. A file added, deleted and added
  again is dated by its last addition (the file there now). Merge commits show no files of their own,
  so a file added on a branch is dated by the branch's commit.
* A file renamed into the folder from outside it is an addition (the log sees only the folder).
* Nothing is read from the user's or the system's git configuration that could change the output
  (colours, signatures, another rename limit): the options are given explicitly.
* No git, a folder outside any work tree, a repository git refuses to read (another owner), or a log
  that takes longer than ``GIT_LOG_TIMEOUT_S``: no dates (the sync dates articles as it would without
  history), and one log line says why.
"""

from __future__ import annotations

import logging
import os
import subprocess
from collections.abc import Iterable
from datetime import UTC, datetime
from pathlib import Path

log = logging.getLogger(__name__)

# A history of tens of thousands of commits logs in well under a second; past this, something is wrong
# (a network file system, a lock) and the sync goes on without dates rather than wait.
GIT_LOG_TIMEOUT_S = 60.0

# Before each commit's files: its author date (strict ISO 8601, with the author's offset).
_COMMIT_MARK = "\x01"


def added_dates(work_tree: Path, folders: Iterable[str]) -> dict[str, datetime]:
    """Path (relative to ``work_tree``, "/"-separated) → naive UTC author date of the commit that added
    the file now at that path, for every file of ``folders`` (paths relative to ``work_tree``) that git
    history knows. Empty when there is no history to read; never raises."""
    pathspecs = [folder.strip("/") or "." for folder in folders]
    command = [
        "git",
        "-C",
        str(work_tree),
        "-c",
        "log.showSignature=false",
        "-c",
        "diff.renameLimit=0",  # 0: no limit (a first commit of every article is one big rename set)
        "log",
        "--reverse",
        "-z",
        "--no-color",
        "--no-ext-diff",
        f"--format={_COMMIT_MARK}%aI",
        "--name-status",
        "-M",
        "--diff-filter=AR",
        "--relative",
        "--",
        *pathspecs,
    ]
    try:
        result = subprocess.run(
            command,
            capture_output=True,
            timeout=GIT_LOG_TIMEOUT_S,
            check=False,
            # The log's bytes are read as git wrote them: no pager, no prompt, English errors.
            env={**os.environ, "GIT_PAGER": "cat", "GIT_TERMINAL_PROMPT": "0", "LC_ALL": "C"},
        )
    except FileNotFoundError:
        log.info("No git history read", extra={"folder": str(work_tree), "reason": "git is not installed"})
        return {}
    except (OSError, subprocess.TimeoutExpired) as exc:
        log.warning("No git history read", extra={"folder": str(work_tree), "reason": str(exc)[:300]})
        return {}
    if result.returncode != 0:
        reason = result.stderr.decode("utf-8", "replace").strip().splitlines()
        # "not a git repository" is the common case (a folder that was never committed): not a warning.
        level = logging.INFO if reason and "not a git repository" in reason[0] else logging.WARNING
        log.log(
            level,
            "No git history read",
            extra={"folder": str(work_tree), "reason": (reason[0] if reason else "git log failed")[:300]},
        )
        return {}
    return parse_log(result.stdout)


def parse_log(output: bytes) -> dict[str, datetime]:
    """The dates of ``added_dates`` from the output of its ``git log`` (oldest commit first)."""
    dates: dict[str, datetime] = {}
    fields = iter(output.decode("utf-8", "surrogateescape").split("\0"))
    when: datetime | None = None
    for raw in fields:
        field = raw.lstrip("\n")
        if not field:
            continue
        if field.startswith(_COMMIT_MARK):
            when = datetime.fromisoformat(field[1:]).astimezone(UTC).replace(tzinfo=None)
            continue
        if when is None:
            continue  # output that does not start with a commit: nothing to date it by
        if field.startswith("R"):
            old, new = next(fields, ""), next(fields, "")
            dates[new] = dates.pop(old, when)
        else:  # "A": the log asks for additions and renames only
            dates[next(fields, "")] = when
    dates.pop("", None)
    return dates
