"""Repository images for readers: which files are assets, their type from the bytes, and the asset
store they are copied to (a folder locally, S3 behind CloudFront on AWS)."""
