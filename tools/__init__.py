"""Developer tools that are no part of the deployed function (see each package's docstring)."""
