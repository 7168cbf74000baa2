"""The share image of an article (``ogpUrl``): what ``og:image``, Twitter cards and JSON-LD point at."""
