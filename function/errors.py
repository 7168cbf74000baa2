"""Specific exceptions raised inside blog-api; the Flask layer maps each to one status and JSON body."""

from __future__ import annotations


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


class Unavailable(BlogApiError):
    """A dependency failed in a way worth retrying (self-invoke, GitHub, database)."""

    status = 503
    code = "UNAVAILABLE"


class ConfigError(Exception):
    """A setting is missing or malformed: the app refuses to start."""
