"""Differential tests of the renderer against Zenn's own (zenn-markdown-html), feature by feature.

``make parity`` renders the corpus (Zenn's MIT examples in tests/fixtures/zenn/ and the articles in
tools/parity/corpus/) with our renderer and compares what a reader sees (``features``) with the
fingerprints of Zenn's output committed in ``zenn_fingerprints.json``; any difference not listed with a
reason in ``allowlist.toml`` fails. ``make parity-zenn`` regenerates those fingerprints with Node and npm
(Zenn's renderer goes into the ignored ``.parity/``). ``python -m tools.parity measure DIR`` runs both
renderers live on a folder of someone's articles and prints the share at parity per feature.
"""
