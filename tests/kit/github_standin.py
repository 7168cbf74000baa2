"""A local GitHub stand-in: the slice of GitHub's REST API that blog-api and its benchmark baseline use.

It runs a stdlib ``ThreadingHTTPServer`` on 127.0.0.1 (port 0, HTTP/1.1 keep-alive) and behaves like
GitHub where it matters to us:

- App auth: ``POST /app/installations/{id}/access_tokens`` checks the App JWT (RS256 against the App's
  public key, ``iss``, ``iat``, ``exp`` at most 10 minutes ahead) and issues tokens with ``expires_at``;
  every ``/repos/...`` route needs a valid unexpired token (``Bearer`` or ``token``), else 401.
  ``GET /app/installations/{id}`` (App JWT) answers an installation with its account login
  (``install(id, login)`` / ``uninstall(id)``), 404 for one not in ``installations``.
- Repositories held in memory; ``set_files`` / ``update_files`` make a commit and move the branch head.
- Routes: ``repos/{o}/{r}``, ``commits/{ref}`` (JSON or ``application/vnd.github.sha``),
  ``git/trees/{sha}?recursive=1``, ``git/blobs/{sha}`` (raw or JSON base64), ``tarball/{ref}`` (302 to
  ``/_codeload/...``, which needs no token, only the one-time query token GitHub puts in that URL), and the
  Contents API ``contents/{dir}`` (listing, at most 1,000 entries) / ``contents/{path}`` (base64 JSON).

Test controls (all thread-safe):

- faults: ``fail(path, status, headers=..., times=n)`` queues answers for a path (exact string or compiled
  regex, matched against the path without its query); ``hang(path, seconds)`` holds a request without an
  answer (bounded by ``max_hang`` and cut short by ``stop()``); ``latency`` adds a delay to every request;
  ``truncate_tree(n)`` makes tree listings partial with ``truncated: true``; ``corrupt_blob(sha, data)``
  serves wrong bytes for a SHA; ``revoke_tokens()``.
- records: ``requests`` (method, path, query, headers, kind, status), ``count(kind)``, ``counts()``,
  ``max_in_flight``, ``jwt_claims``, ``reset_records()``.

Extending it: ``add_route(method, pattern, handler, kind=..., auth="app" | "token" | None)`` with a handler
``(request: StandInRequest, match: re.Match[str]) -> StandInResponse``; routes added later win over the
built-in ones. The App hook-deliveries API, for instance, is ``add_route("GET", r"/app/hook/deliveries",
..., kind="hook_deliveries", auth="app")``.
"""

from __future__ import annotations

import base64
import collections
import gzip
import hashlib
import io
import itertools
import json
import re
import secrets
import socket
import tarfile
import threading
import time
import zlib
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, quote, unquote, urlsplit

import jwt

from function.sources.gitsha import git_blob_sha

JSON_TYPE = "application/json; charset=utf-8"
CONTENTS_LIST_LIMIT = 1000  # GitHub's Contents API lists at most 1,000 entries of a folder


@dataclass
class StandInRequest:
    method: str
    path: str  # without the query string, percent-decoded
    query: dict[str, str]
    headers: dict[str, str]  # lower-case names
    body: bytes
    kind: str = "unknown"
    status: int = 0  # the status answered, filled in once known
    installation_id: int | None = None  # the installation whose token authorised the request


@dataclass
class StandInResponse:
    status: int
    body: bytes = b""
    headers: dict[str, str] = field(default_factory=dict)
    held: TarballHold | None = None  # send part of the body, then wait (a slow download)


@dataclass
class TarballHold:
    """The next tarball download sends its first ``fraction`` of bytes, then waits until ``release`` is
    set (at most ``max_wait`` seconds) before the rest; ``rest_sent`` is set once the rest went out."""

    fraction: float
    max_wait: float = 10.0
    release: threading.Event = field(default_factory=threading.Event)
    rest_sent: threading.Event = field(default_factory=threading.Event)


def json_response(data: Any, status: int = 200, headers: Mapping[str, str] | None = None) -> StandInResponse:
    """A JSON answer, as GitHub sends them."""
    return StandInResponse(status, json.dumps(data).encode(), {"Content-Type": JSON_TYPE, **(headers or {})})


def message_response(status: int, message: str) -> StandInResponse:
    """GitHub's error shape: ``{"message": ..., "documentation_url": ...}``."""
    return json_response({"message": message, "documentation_url": "https://docs.github.com/rest"}, status)


Handler = Callable[[StandInRequest, "re.Match[str]"], StandInResponse]


@dataclass(frozen=True)
class _Route:
    method: str
    pattern: re.Pattern[str]
    handler: Handler
    kind: str
    auth: str | None  # "app", "token" or None


@dataclass
class _Fault:
    response: StandInResponse | None  # None: hang
    remaining: int | None  # None: forever
    hang_seconds: float = 0.0


@dataclass
class StandInRepo:
    """One repository: commits are ``{path: blob sha}`` maps, blobs are shared by content."""

    full_name: str
    default_branch: str = "main"
    branches: dict[str, str] = field(default_factory=dict)  # branch -> commit sha
    commits: dict[str, dict[str, str]] = field(default_factory=dict)  # commit sha -> {path: blob sha}
    blobs: dict[str, bytes] = field(default_factory=dict)


class _NotFound(Exception):
    pass


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True

    def __init__(self, address: tuple[str, int], standin: GitHubStandIn) -> None:
        self.standin = standin
        self.open_sockets: set[socket.socket] = set()
        self.sockets_lock = threading.Lock()
        super().__init__(address, _RequestHandler)

    def process_request(self, request: Any, client_address: Any) -> None:
        with self.sockets_lock:
            self.open_sockets.add(request)
        super().process_request(request, client_address)

    def shutdown_request(self, request: Any) -> None:
        with self.sockets_lock:
            self.open_sockets.discard(request)
        super().shutdown_request(request)

    def close_open_connections(self) -> None:
        """Cut idle keep-alive connections so their handler threads end with the server."""
        with self.sockets_lock:
            sockets = list(self.open_sockets)
        for sock in sockets:
            try:
                sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass


class _RequestHandler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    timeout = 60  # an idle keep-alive connection ends after this
    # Headers and body go out as two writes: with Nagle on, the body waits for the client's delayed ACK
    # (~40 ms on Linux) on every keep-alive request, a cost GitHub does not have.
    disable_nagle_algorithm = True
    server: _Server

    def log_message(self, format: str, *args: Any) -> None:  # quiet: tests read records, not stderr
        pass

    def _handle(self) -> None:
        parts = urlsplit(self.path)
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length else b""
        request = StandInRequest(
            method=self.command,
            path=unquote(parts.path),
            query={k: v[-1] for k, v in parse_qs(parts.query, keep_blank_values=True).items()},
            headers={k.lower(): v for k, v in self.headers.items()},
            body=body,
        )
        response = self.server.standin.dispatch(request)
        if response is None:  # a hang that ended: the client gave up long ago, just drop the connection
            self.close_connection = True
            return
        try:
            self.send_response(response.status)
            for name, value in response.headers.items():
                self.send_header(name, value)
            self.send_header("Content-Length", str(len(response.body)))
            self.end_headers()
            if self.command != "HEAD" and response.held is not None:
                split = int(len(response.body) * response.held.fraction)
                self.wfile.write(response.body[:split])
                self.wfile.flush()
                response.held.release.wait(response.held.max_wait)
                self.wfile.write(response.body[split:])
                response.held.rest_sent.set()
            elif self.command != "HEAD":
                self.wfile.write(response.body)
        except (BrokenPipeError, ConnectionResetError):
            self.close_connection = True

    do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = do_HEAD = _handle


class GitHubStandIn:
    """A running (after ``start()`` or ``with``) GitHub stand-in. See the module docstring."""

    def __init__(
        self,
        *,
        app_id: int = 12345,
        app_public_key: Any = None,
        installations: Iterable[int] = (1,),
        token_ttl: float = 3600.0,
        clock: Callable[[], float] = time.time,
        latency: float = 0.0,
        max_hang: float = 30.0,
        codeload_base: str | None = None,
    ) -> None:
        self.app_id = app_id
        self.app_public_key = app_public_key
        self.installations = set(installations)
        self.installation_logins: dict[int, str] = {}  # id -> account login; "octo" when not set
        self.installation_accounts: dict[int, int] = {}  # id -> account id; account_id_of(login) when not set
        self.token_ttl = token_ttl
        self.clock = clock
        self.latency = latency
        self.max_hang = max_hang
        # Where tarball redirects point; another origin (e.g. "http://localhost:<port>") tests that the
        # client drops Authorization on a cross-host redirect. None: this server's own URL.
        self.codeload_base = codeload_base
        self.repos: dict[str, StandInRepo] = {}
        self.jwt_claims: list[dict[str, Any]] = []
        self.max_in_flight = 0
        self._tokens: dict[str, tuple[int, float]] = {}  # token -> (installation, expires_at)
        self._codeload_tokens: set[str] = set()
        self._faults: list[tuple[str | re.Pattern[str], _Fault]] = []
        self._records: list[StandInRequest] = []
        self._tree_limit: int | None = None
        self._corrupt: dict[str, bytes] = {}
        self._tarballs: dict[str, bytes] = {}
        self._tarball_hold: TarballHold | None = None
        # Tree bodies by (repository, commit, recursive, limit): a commit never changes, and GitHub
        # serves trees from a cache too; the benchmark's worker shares this process and its CPU.
        self._trees: dict[tuple[str, str, bool, int | None], bytes] = {}
        self._routes: list[_Route] = []
        self._commit_counter = itertools.count(1)
        self._in_flight = 0
        self._lock = threading.RLock()
        self._stopping = threading.Event()
        self._server: _Server | None = None
        self._thread: threading.Thread | None = None
        self._register_builtin_routes()

    # -- lifecycle ---------------------------------------------------------------------------------

    def start(self) -> GitHubStandIn:
        self._stopping.clear()
        self._server = _Server(("127.0.0.1", 0), self)
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving: hangs end at once, open connections are cut, the port is released."""
        self._stopping.set()
        if self._server is not None:
            self._server.shutdown()
            self._server.close_open_connections()
            self._server.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)
        self._server = self._thread = None

    def __enter__(self) -> GitHubStandIn:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def port(self) -> int:
        if self._server is None:
            raise RuntimeError("the stand-in is not running")
        return int(self._server.server_address[1])

    @property
    def url(self) -> str:
        """Base URL, to pass as the GitHub API URL."""
        return f"http://127.0.0.1:{self.port}"

    # -- repository state --------------------------------------------------------------------------

    def add_repo(self, full_name: str, default_branch: str = "main") -> StandInRepo:
        """Create an empty repository (``set_files`` does it implicitly)."""
        with self._lock:
            repo = self.repos.get(full_name)
            if repo is None:
                repo = self.repos[full_name] = StandInRepo(full_name, default_branch)
            return repo

    def set_files(
        self, files: Mapping[str, bytes], *, repo: str = "octo/blog", branch: str | None = None
    ) -> str:
        """Commit exactly ``files`` (the whole tree) on ``branch`` (default branch if None); returns the
        new head SHA. Every call makes a new commit, even when nothing changed (like an empty push)."""
        with self._lock:
            state = self.add_repo(repo)
            tree: dict[str, str] = {}
            for path, data in files.items():
                sha = git_blob_sha(data)
                state.blobs[sha] = bytes(data)
                tree[path.strip("/")] = sha
            material = f"{repo}\0{next(self._commit_counter)}\0" + json.dumps(sorted(tree.items()))
            commit = hashlib.sha1(material.encode(), usedforsecurity=False).hexdigest()
            state.commits[commit] = tree
            state.branches[branch or state.default_branch] = commit
            return commit

    def update_files(
        self, changes: Mapping[str, bytes | None], *, repo: str = "octo/blog", branch: str | None = None
    ) -> str:
        """Commit ``changes`` on top of the branch head (``None`` deletes a path); returns the new head."""
        with self._lock:
            current = self.files(repo=repo, branch=branch) if repo in self.repos else {}
            for path, data in changes.items():
                if data is None:
                    current.pop(path, None)
                else:
                    current[path] = data
            return self.set_files(current, repo=repo, branch=branch)

    def head(self, *, repo: str = "octo/blog", branch: str | None = None) -> str:
        with self._lock:
            state = self.repos[repo]
            return state.branches[branch or state.default_branch]

    def files(self, *, repo: str = "octo/blog", branch: str | None = None) -> dict[str, bytes]:
        """The files at the branch head."""
        with self._lock:
            state = self.repos[repo]
            head = state.branches.get(branch or state.default_branch)
            tree = state.commits[head] if head is not None else {}
            return {path: state.blobs[sha] for path, sha in tree.items()}

    # -- faults ------------------------------------------------------------------------------------

    def fail(
        self,
        path: str | re.Pattern[str],
        status: int,
        *,
        headers: Mapping[str, str] | None = None,
        body: bytes | None = None,
        times: int | None = 1,
    ) -> None:
        """Answer the next ``times`` requests for ``path`` (None: all of them) with ``status``.

        Queued faults for one path are served in order; a fault takes effect before authentication,
        as a failing load balancer in front of GitHub would."""
        if body is None:
            body = json.dumps({"message": f"injected {status}"}).encode()
        response = StandInResponse(status, body, {"Content-Type": JSON_TYPE, **(headers or {})})
        with self._lock:
            self._faults.append((path, _Fault(response, times)))

    def hang(self, path: str | re.Pattern[str], seconds: float, *, times: int | None = 1) -> None:
        """Hold the next ``times`` requests for ``path`` unanswered for ``seconds`` (at most ``max_hang``,
        and no longer than until ``stop()``), then drop the connection."""
        with self._lock:
            self._faults.append((path, _Fault(None, times, hang_seconds=seconds)))

    def clear_faults(self) -> None:
        with self._lock:
            self._faults.clear()
            self._corrupt.clear()
            self._tree_limit = None

    def hold_tarball(self, fraction: float, *, max_wait: float = 10.0) -> TarballHold:
        """Make the next tarball download stop after ``fraction`` of its bytes until released."""
        hold = TarballHold(fraction, max_wait)
        with self._lock:
            self._tarball_hold = hold
        return hold

    def truncate_tree(self, keep: int | None) -> None:
        """Tree listings return only their first ``keep`` entries with ``truncated: true`` (None: whole)."""
        with self._lock:
            self._tree_limit = keep

    def corrupt_blob(self, sha: str, data: bytes) -> None:
        """Serve ``data`` for blob ``sha`` (blob and Contents API, tarball): its SHA no longer matches."""
        with self._lock:
            self._corrupt[sha] = data
            self._tarballs.clear()

    def revoke_tokens(self) -> None:
        """Invalidate every issued installation token (GitHub then answers 401 with them)."""
        with self._lock:
            self._tokens.clear()

    # -- records -----------------------------------------------------------------------------------

    @property
    def requests(self) -> list[StandInRequest]:
        """Every request received so far, in arrival order (a copy)."""
        with self._lock:
            return list(self._records)

    def count(self, kind: str | None = None, *, exclude: Iterable[str] = ()) -> int:
        """How many requests of ``kind`` (all when None), leaving out the kinds in ``exclude``.

        Kinds: token, repo, commit, tree, blob, tarball, codeload, contents, unknown (and added ones)."""
        excluded = set(exclude)
        with self._lock:
            return sum(
                1 for r in self._records if (kind is None or r.kind == kind) and r.kind not in excluded
            )

    def counts(self) -> collections.Counter[str]:
        with self._lock:
            return collections.Counter(r.kind for r in self._records)

    def reset_records(self) -> None:
        with self._lock:
            self._records.clear()
            self.jwt_claims.clear()
            self.max_in_flight = 0

    # -- routing -----------------------------------------------------------------------------------

    def install(self, installation_id: int, login: str, account_id: int | None = None) -> None:
        """The App is (now) installed on ``login``'s account with this id (the account's numeric id:
        ``account_id``, by default ``account_id_of(login)``)."""
        with self._lock:
            self.installations.add(installation_id)
            self.installation_logins[installation_id] = login
            self.installation_accounts[installation_id] = account_id or account_id_of(login)

    def uninstall(self, installation_id: int) -> None:
        with self._lock:
            self.installations.discard(installation_id)

    def add_route(
        self, method: str, pattern: str, handler: Handler, *, kind: str, auth: str | None = "token"
    ) -> None:
        """Serve ``method`` on paths fully matching ``pattern`` with ``handler``.

        ``auth``: "app" needs a valid App JWT, "token" a valid installation token, None nothing."""
        if auth not in ("app", "token", None):
            raise ValueError("auth must be 'app', 'token' or None")
        route = _Route(method.upper(), re.compile(pattern), handler, kind, auth)
        with self._lock:
            self._routes.insert(0, route)

    def _register_builtin_routes(self) -> None:
        repo = r"/repos/(?P<owner>[^/]+)/(?P<name>[^/]+)"
        builtin = [
            ("POST", r"/app/installations/(?P<id>\d+)/access_tokens", self._access_token, "token", "app"),
            ("GET", r"/app/installations/(?P<id>\d+)", self._get_installation, "installation", "app"),
            ("GET", repo, self._get_repo, "repo", "token"),
            ("GET", repo + r"/commits/(?P<ref>.+)", self._get_commit, "commit", "token"),
            ("GET", repo + r"/git/trees/(?P<ref>[^/]+)", self._get_tree, "tree", "token"),
            ("GET", repo + r"/git/blobs/(?P<sha>[^/]+)", self._get_blob, "blob", "token"),
            ("GET", repo + r"/tarball(?:/(?P<ref>.+))?", self._get_tarball, "tarball", "token"),
            ("GET", repo + r"/contents(?:/(?P<path>.*))?", self._get_contents, "contents", "token"),
            (
                "GET",
                r"/_codeload/(?P<owner>[^/]+)/(?P<name>[^/]+)/legacy\.tar\.gz/(?P<sha>[0-9a-f]+)",
                self._get_codeload,
                "codeload",
                None,
            ),
        ]
        for method, pattern, handler, kind, auth in reversed(builtin):
            self.add_route(method, pattern, handler, kind=kind, auth=auth)

    def dispatch(self, request: StandInRequest) -> StandInResponse | None:
        """Answer one request: record it, add latency, apply faults, check auth, route. None: hang up."""
        route, match = self._match(request)
        request.kind = route.kind if route is not None else "unknown"
        with self._lock:
            self._records.append(request)
            self._in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self._in_flight)
        try:
            response = self._answer(request, route, match)
            request.status = response.status if response is not None else 0
            return response
        finally:
            with self._lock:
                self._in_flight -= 1

    def _match(self, request: StandInRequest) -> tuple[_Route | None, re.Match[str] | None]:
        with self._lock:
            routes = list(self._routes)
        for route in routes:
            match = route.pattern.fullmatch(request.path)
            if match is not None and route.method == request.method:
                return route, match
        return None, None

    def _answer(
        self, request: StandInRequest, route: _Route | None, match: re.Match[str] | None
    ) -> StandInResponse | None:
        if self.latency > 0:
            self._stopping.wait(self.latency)
        fault = self._take_fault(request.path)
        if fault is not None:
            if fault.response is not None:
                return fault.response
            self._stopping.wait(min(fault.hang_seconds, self.max_hang))
            return None
        if route is None or match is None:
            return message_response(404, "Not Found")
        denied = self._authorise(request, route.auth)
        if denied is not None:
            return denied
        try:
            return route.handler(request, match)
        except _NotFound:
            return message_response(404, "Not Found")

    def _take_fault(self, path: str) -> _Fault | None:
        with self._lock:
            for index, (key, fault) in enumerate(self._faults):
                hit = key.fullmatch(path) is not None if isinstance(key, re.Pattern) else key == path
                if not hit:
                    continue
                if fault.remaining is not None:
                    fault.remaining -= 1
                    if fault.remaining <= 0:
                        del self._faults[index]
                return fault
        return None

    # -- auth --------------------------------------------------------------------------------------

    def _authorise(self, request: StandInRequest, auth: str | None) -> StandInResponse | None:
        if auth is None:
            return None
        scheme, _, credential = request.headers.get("authorization", "").partition(" ")
        if auth == "app":
            problem = self._jwt_problem(credential) if scheme.lower() == "bearer" else "missing JWT"
            return message_response(401, problem) if problem else None
        if scheme.lower() not in ("bearer", "token"):
            return message_response(401, "Requires authentication")
        with self._lock:
            issued = self._tokens.get(credential)
        if issued is None or self.clock() >= issued[1]:
            return message_response(401, "Bad credentials")
        request.installation_id = issued[0]
        return None

    def _jwt_problem(self, token: str) -> str | None:
        if self.app_public_key is None:
            return "the stand-in has no App public key"
        try:
            if jwt.get_unverified_header(token).get("alg") != "RS256":
                return "JWT must be signed with RS256"
            claims = jwt.decode(
                token,
                self.app_public_key,
                algorithms=["RS256"],
                # Times are checked below against the stand-in's clock, which tests may move.
                options={"verify_exp": False, "verify_iat": False, "require": ["iat", "exp", "iss"]},
            )
        except jwt.PyJWTError:
            return "A JSON web token could not be decoded"
        with self._lock:
            self.jwt_claims.append(claims)
        now = self.clock()
        if str(claims["iss"]) != str(self.app_id):
            return "Integration not found"
        if not isinstance(claims["exp"], int) or not isinstance(claims["iat"], int):
            return "'exp' and 'iat' must be integers"
        if claims["exp"] <= now:
            return "'Expiration time' claim ('exp') must be a numeric value representing the future time"
        if claims["exp"] > now + 600 + 5:
            return "'Expiration time' claim ('exp') is too far in the future"
        if claims["iat"] > now + 5:
            return "'Issued at' claim ('iat') must be an Integer representing a time in the past"
        return None

    # -- handlers ----------------------------------------------------------------------------------

    def _repo(self, match: re.Match[str]) -> StandInRepo:
        with self._lock:
            repo = self.repos.get(f"{match['owner']}/{match['name']}")
        if repo is None:
            raise _NotFound
        return repo

    def _resolve(self, repo: StandInRepo, ref: str | None) -> str | None:
        """A branch name or commit SHA to a commit SHA."""
        ref = ref or repo.default_branch
        if ref in repo.branches:
            return repo.branches[ref]
        ref = ref.removeprefix("refs/heads/")
        if ref in repo.branches:
            return repo.branches[ref]
        return ref if ref in repo.commits else None

    def _blob(self, repo: StandInRepo, sha: str) -> bytes:
        with self._lock:
            if sha in self._corrupt:
                return self._corrupt[sha]
            if sha not in repo.blobs:
                raise _NotFound
            return repo.blobs[sha]

    def _access_token(self, request: StandInRequest, match: re.Match[str]) -> StandInResponse:
        installation = int(match["id"])
        if installation not in self.installations:
            return message_response(404, "Not Found")
        token = "ghs_" + secrets.token_urlsafe(27)
        expires_at = self.clock() + self.token_ttl
        with self._lock:
            self._tokens[token] = (installation, expires_at)
        stamp = datetime.fromtimestamp(int(expires_at), UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
        return json_response(
            {
                "token": token,
                "expires_at": stamp,
                "permissions": {"contents": "read", "metadata": "read"},
                "repository_selection": "all",
            },
            201,
        )

    def _get_installation(self, request: StandInRequest, match: re.Match[str]) -> StandInResponse:
        installation = int(match["id"])
        with self._lock:
            if installation not in self.installations:
                return message_response(404, "Not Found")
            login = self.installation_logins.get(installation, "octo")
            account_id = self.installation_accounts.get(installation, account_id_of(login))
        return json_response(
            {
                "id": installation,
                "account": {"login": login, "id": account_id, "type": "User"},
                "app_id": self.app_id,
                "target_type": "User",
                "repository_selection": "all",
                "suspended_at": None,
            }
        )

    def _get_repo(self, request: StandInRequest, match: re.Match[str]) -> StandInResponse:
        repo = self._repo(match)
        return json_response(
            {"full_name": repo.full_name, "default_branch": repo.default_branch, "private": True}
        )

    def _get_commit(self, request: StandInRequest, match: re.Match[str]) -> StandInResponse:
        repo = self._repo(match)
        sha = self._resolve(repo, match["ref"])
        if sha is None:
            return message_response(422, f"No commit found for SHA: {match['ref']}")
        if "application/vnd.github.sha" in request.headers.get("accept", ""):
            return StandInResponse(200, sha.encode(), {"Content-Type": "application/vnd.github.sha"})
        return json_response({"sha": sha, "commit": {"tree": {"sha": sha}}})

    def _get_tree(self, request: StandInRequest, match: re.Match[str]) -> StandInResponse:
        repo = self._repo(match)
        sha = self._resolve(repo, match["ref"])
        if sha is None:
            raise _NotFound
        recursive = request.query.get("recursive") not in (None, "", "0", "false")
        with self._lock:
            tree = dict(repo.commits[sha])
            limit = self._tree_limit
            key = (f"{match['owner']}/{match['name']}", sha, recursive, limit)
            body = self._trees.get(key)
        if body is None:
            entries = _tree_entries(tree, sha, recursive, {s: len(repo.blobs[s]) for s in tree.values()})
            truncated = limit is not None and len(entries) > limit
            if limit is not None:
                entries = entries[:limit]
            body = json_response({"sha": sha, "tree": entries, "truncated": truncated}).body
            with self._lock:
                self._trees[key] = body
        return StandInResponse(200, body, {"Content-Type": JSON_TYPE})

    def _get_blob(self, request: StandInRequest, match: re.Match[str]) -> StandInResponse:
        repo = self._repo(match)
        data = self._blob(repo, match["sha"])
        if "raw" in request.headers.get("accept", ""):
            return StandInResponse(200, data, {"Content-Type": "application/vnd.github.raw"})
        return json_response(
            {"sha": match["sha"], "size": len(data), "content": _base64_lines(data), "encoding": "base64"}
        )

    def serve_tarball(self, commit: str, archive: bytes) -> None:
        """Answer ``archive`` (any bytes) for the tarball of ``commit``, not one made from its files."""
        with self._lock:
            self._tarballs[commit] = archive

    def _get_tarball(self, request: StandInRequest, match: re.Match[str]) -> StandInResponse:
        repo = self._repo(match)
        sha = self._resolve(repo, match["ref"])
        if sha is None:
            raise _NotFound
        ticket = secrets.token_urlsafe(16)
        with self._lock:
            self._codeload_tokens.add(ticket)
        base = self.codeload_base or self.url
        location = f"{base}/_codeload/{quote(match['owner'])}/{quote(match['name'])}/legacy.tar.gz/{sha}"
        return StandInResponse(302, b"", {"Location": f"{location}?token={ticket}"})

    def _get_codeload(self, request: StandInRequest, match: re.Match[str]) -> StandInResponse:
        with self._lock:
            valid = request.query.get("token") in self._codeload_tokens
        if not valid:
            return message_response(404, "Not Found")
        repo = self._repo(match)
        sha = match["sha"]
        if sha not in repo.commits:
            raise _NotFound
        with self._lock:
            archive = self._tarballs.get(sha)
        if archive is None:
            files = {path: self._blob(repo, blob) for path, blob in repo.commits[sha].items()}
            archive = _tarball(repo.full_name, sha, files)
            with self._lock:
                self._tarballs[sha] = archive
        folder = f"{repo.full_name.replace('/', '-')}-{sha[:7]}"
        with self._lock:
            hold, self._tarball_hold = self._tarball_hold, None
        return StandInResponse(
            200,
            archive,
            {
                "Content-Type": "application/x-gzip",
                "Content-Disposition": f"attachment; filename={folder}.tar.gz",
            },
            held=hold,
        )

    def _get_contents(self, request: StandInRequest, match: re.Match[str]) -> StandInResponse:
        repo = self._repo(match)
        sha = self._resolve(repo, request.query.get("ref"))
        if sha is None:
            raise _NotFound
        path = (match["path"] or "").strip("/")
        with self._lock:
            tree = dict(repo.commits[sha])
        api = f"{self.url}/repos/{repo.full_name}"
        if path in tree:
            data = self._blob(repo, tree[path])
            if "raw" in request.headers.get("accept", ""):
                return StandInResponse(200, data, {"Content-Type": "application/vnd.github.raw"})
            entry = _contents_entry(api, path, "file", tree[path], len(data))
            return json_response({**entry, "content": _base64_lines(data), "encoding": "base64"})
        prefix = f"{path}/" if path else ""
        children: dict[str, dict[str, Any]] = {}
        for file_path, blob in sorted(tree.items()):
            if not file_path.startswith(prefix):
                continue
            name, sep, _ = file_path[len(prefix) :].partition("/")
            child = prefix + name
            if child not in children:
                kind, child_sha = ("dir", _fake_tree_sha(sha, child)) if sep else ("file", blob)
                size = 0 if sep else len(repo.blobs.get(blob, b""))
                children[child] = _contents_entry(api, child, kind, child_sha, size)
        if not children:
            raise _NotFound
        return json_response(list(children.values())[:CONTENTS_LIST_LIMIT])


def _base64_lines(data: bytes) -> str:
    """Base64 wrapped at 60 characters with newlines, as GitHub returns blob and file contents."""
    encoded = base64.b64encode(data).decode()
    return "".join(encoded[i : i + 60] + "\n" for i in range(0, len(encoded), 60))


def _fake_tree_sha(commit: str, folder: str) -> str:
    return hashlib.sha1(f"tree {commit} {folder}".encode(), usedforsecurity=False).hexdigest()


def _tree_entries(
    tree: Mapping[str, str], commit: str, recursive: bool, sizes: Mapping[str, int]
) -> list[Any]:
    """Git Trees API entries: folders as ``tree`` entries, files as ``blob``; top level only unless
    ``recursive``."""
    entries: dict[str, dict[str, Any]] = {}
    for path, sha in tree.items():
        parts = path.split("/")
        for depth in range(1, len(parts)):
            folder = "/".join(parts[:depth])
            if folder not in entries:
                entries[folder] = {
                    "path": folder,
                    "mode": "040000",
                    "type": "tree",
                    "sha": _fake_tree_sha(commit, folder),
                }
        entries[path] = {"path": path, "mode": "100644", "type": "blob", "sha": sha, "size": sizes[sha]}
    listed = [e for p, e in sorted(entries.items()) if recursive or "/" not in p]
    return listed


def _contents_entry(api: str, path: str, kind: str, sha: str, size: int) -> dict[str, Any]:
    return {
        "type": kind,
        "name": path.rpartition("/")[2],
        "path": path,
        "sha": sha,
        "size": size,
        "url": f"{api}/contents/{path}",
        "git_url": f"{api}/git/{'blobs' if kind == 'file' else 'trees'}/{sha}",
        "download_url": None,
    }


def account_id_of(login: str) -> int:
    """A GitHub account id for ``login``, always the same (GitHub's ids are numbers that a rename keeps)."""
    return 1_000_000 + zlib.crc32(login.encode()) % 1_000_000


def _tarball(full_name: str, commit: str, files: Mapping[str, bytes]) -> bytes:
    """A gzipped tar like GitHub's: a pax global header with the commit, one top folder for everything."""
    folder = f"{full_name.replace('/', '-')}-{commit[:7]}"
    raw = io.BytesIO()
    with tarfile.open(
        fileobj=raw, mode="w", format=tarfile.PAX_FORMAT, pax_headers={"comment": commit}
    ) as tar:
        top = tarfile.TarInfo(folder)
        top.type = tarfile.DIRTYPE
        top.mode = 0o775
        tar.addfile(top)
        for path, data in sorted(files.items()):
            info = tarfile.TarInfo(f"{folder}/{path}")
            info.size = len(data)
            info.mode = 0o664
            tar.addfile(info, io.BytesIO(data))
    return gzip.compress(raw.getvalue(), compresslevel=1, mtime=0)
