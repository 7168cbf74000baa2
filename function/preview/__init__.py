"""``blog-api preview``: an author's own repository in the browser, as readers will see it.

The same folder source, worker, store (a throwaway SQLite) and renderer as production, the app's own
routes for images (``/assets/<key>``) and ``/static/content.css``, plus HTML pages of every article and
book, drafts included (``pages``). A watcher re-syncs the folder on every save (``watch``) and an open
page reloads itself (server-sent events). Nothing here is imported by the Lambda function.
"""
