"""Search over a user's articles: the lexical index's tokens and ranking, the semantic port, and the
fusion of both. Standard library only: the store (which writes the index in the sync's transaction)
and the read routes both import it."""
