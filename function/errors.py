"""Specific exceptions raised inside blog-api; the Flask layer maps each to one status and JSON body."""

from __future__ import annotations

from shared.runtime_settings import variable


class BlogApiError(Exception):
    """Base class: ``status`` and ``code`` are what the HTTP edge answers."""

    status = 500
    code = "INTERNAL"

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class BadRequest(BlogApiError):
    status = 400
    code = "BAD_REQUEST"


class InvalidSignature(BlogApiError):
    status = 401
    code = "UNAUTHORIZED"


class Forbidden(BlogApiError):
    status = 403
    code = "FORBIDDEN"


class NotFound(BlogApiError):
    status = 404
    code = "NOT_FOUND"


class UnknownInstallation(BlogApiError):
    """A push from an App installation that no user is registered for: permanent, never retried."""

    status = 422
    code = "UNKNOWN_INSTALLATION"

    def __init__(self, installation_id: int) -> None:
        self.installation_id = installation_id
        super().__init__(
            f"no user is registered for GitHub App installation {installation_id}; fix it with: "
            f"blog-api users set-installation --name <user> --installation-id {installation_id}"
        )


class SourceMismatch(BlogApiError):
    """A sync from a source other than the one the user is bound to: refused before anything is read or
    written (permanent, never retried); the message names both sources and the command to rebind."""

    status = 409
    code = "SOURCE_MISMATCH"


class Unavailable(BlogApiError):
    """A dependency failed in a way worth retrying (self-invoke, GitHub, database)."""

    status = 503
    code = "UNAVAILABLE"


class SearchUnavailable(BlogApiError):
    """Semantic or hybrid search asked for while no embedding provider is configured."""

    status = 503
    code = "SEARCH_UNAVAILABLE"


class ConfigError(Exception):
    """A setting is missing or malformed: the app refuses to start."""


class UserExists(Exception):
    """The user name, or the installation id, is already registered."""


class UnknownUser(Exception):
    """No user has that name."""


class LockTimeout(Exception):
    """The per-user lock was not acquired in time (another sync holds it): worth retrying."""


class PassThroughFailed(Exception):
    """The pass-through route answered 5xx: raised so Lambda retries the asynchronous event."""


class PayloadTooLarge(Exception):
    """Lambda refused the payload as too large (413): the caller may retry with the compact form."""


class ArticleParseError(Exception):
    """A file that cannot become an article (bad YAML, missing title, wrong types, bad slug...)."""


class RenderLimitError(ValueError):
    """A Markdown body past a render bound (CPU budget); the message says which."""


class RedeliveryNotConfigured(BlogApiError):
    """No GitHub App id or private key: the sweep cannot list deliveries. Permanent (no retry)."""

    status = 422
    code = "NOT_CONFIGURED"


class EmbeddingFailed(BlogApiError):
    """The embedding provider gave no usable answer (down, slow past its time-out after the retries, an
    error status, or vectors of the wrong dimension, with non-finite values or chunks out of order).

    ``detail`` (also ``str()``) names the provider and what was wrong, its host and path included, for the
    log; never a key or the text sent. ``message``, what a reader's 502 says, is general."""

    status = 502
    code = "EMBEDDING_FAILED"
    PUBLIC_MESSAGE = (
        "the embedding provider could not embed the query; try again, or search with searchMode=lexical"
    )

    def __init__(self, detail: str) -> None:
        super().__init__(self.PUBLIC_MESSAGE)
        self.args = (detail,)
        self.detail = detail


class RedeliveryRefused(Exception):
    """GitHub answered the redelivery request with something other than 202."""


class SourceUnavailable(Exception):
    """The source could not be read at all (GitHub down, time-out after retries). Worth retrying."""


class SourcePermanentError(Exception):
    """The source refused for good (installation or repository gone, access revoked, branch missing).

    Retrying the same delivery cannot help: the worker reports it as a permanent (4xx) failure.
    """


class DatabaseUrlError(ConfigError, ValueError):
    """DATABASE_URL cannot be used; the message says why without quoting it."""

    def __init__(self, reason: str) -> None:
        super().__init__(f"{variable('database_url')}: {reason}")


class DatabaseUnavailable(Exception):
    """The database could not be reached, the connection dropped or timed out, or the transaction was
    aborted by the server (deadlock, lock wait). Nothing was committed; worth retrying."""


class DatabaseNotInitialised(DatabaseUnavailable):
    """The database answers but has no tables: retryable, since the delivery succeeds once someone
    runs ``blog-api init-db`` (before Lambda's retries run out)."""


class HttpError(Exception):
    """No answer at all after the retries: connection refused, reset, DNS, or too many redirects.

    The message names the method, host and path only (never the query string or headers).
    """


class HttpTimeout(HttpError):
    """The connect or read time-out expired on the last try."""


class BodyTooLarge(HttpError):
    """The answer's body (after Content-Encoding is decoded) passed the caller's limit while it was
    read; reading stopped there, so memory stays bounded whatever was sent."""


class GitHubAuthError(SourcePermanentError):
    """GitHub refused the App's credentials or the token request (bad key, wrong App id, suspended
    installation). Permanent: retrying the same delivery cannot help."""


class InstallationNotFound(GitHubAuthError):
    """The installation does not exist (any more): the App was uninstalled."""

    def __init__(self, installation_id: int) -> None:
        self.installation_id = installation_id
        super().__init__(f"GitHub App installation {installation_id} not found (uninstalled?)")


class Conflict(BlogApiError):
    """What the request would create exists already (a user name, an installation registered)."""

    status = 409
    code = "CONFLICT"


class SchemaMismatch(BlogApiError):
    """The database's tables differ from what this version reads and writes in a way no migration step
    mends: ``migrate`` and ``init-db`` name the differences and stop (permanent: no retry helps)."""

    status = 409
    code = "SCHEMA_MISMATCH"


class SchemaTooNew(SchemaMismatch):
    """A newer blog-api migrated the database past this code's schema version: this code refuses to run a
    job on it, or to migrate it (permanent: only running that newer version helps)."""

    def __init__(self, needed: int, found: int) -> None:
        self.needed, self.found = needed, found
        super().__init__(
            f"this blog-api needs database schema version {needed} and found version {found}, made by a "
            f"newer blog-api: run that version (or a newer one) against this database"
        )


class SchemaBehind(DatabaseNotInitialised):
    """The database's schema is older than this code's: retryable, since the job passes once someone runs
    ``blog-api migrate`` (before Lambda's retries run out)."""

    def __init__(self, needed: int, found: int) -> None:
        self.needed, self.found = needed, found
        super().__init__(
            f"this blog-api needs database schema version {needed} and found version {found}: run "
            '`blog-api migrate` against the database (or invoke the function with {"kind": "init-db"})'
        )


class HookUrlRefused(Exception):
    """An outgoing webhook's URL may not be called: not https (http only to loopback outside Lambda),
    or its host resolves to an address the function must never reach (private, link-local, loopback on
    Lambda, multicast, the metadata service). The message names the rule, never the URL's path."""


class AssetStoreError(Exception):
    """The asset store (the folder, or S3) could not store an image: worth retrying, like a source
    that is down. The message names the key, never a credential."""


class StoreStepFailed(Exception):
    """A database statement of a sync failed for a reason a retry does not cure (a refused statement, a
    constraint). The message says in words which step of which chunk failed, that its transaction was
    rolled back, and what this sync committed before it (served)."""


# What the sync's own dependencies raise while a file is read (the source, the database, the asset
# store, the network): never that file's fault, so the articles' per-file boundary lets them through to
# the sync, which retries or reports them. Anything else raised while a file is read is the file's.
SYNC_FAILURES: tuple[type[Exception], ...] = (
    Unavailable,
    SourceUnavailable,
    SourcePermanentError,
    DatabaseUnavailable,
    HttpError,
    AssetStoreError,
    LockTimeout,
    StoreStepFailed,
)
