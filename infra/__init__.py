"""The Pulumi program of blog-api (``main: infra/``): one component per part, wired in ``__main__.py``."""
