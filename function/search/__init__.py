"""Search over a user's served articles: lexical, and semantic when an embedding provider is configured."""
