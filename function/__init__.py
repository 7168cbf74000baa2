"""blog-api: the Flask app, the Lambda entry and the article worker."""
