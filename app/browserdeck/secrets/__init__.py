"""Secrets: the user's vault, one-time codes, browserdeck's own tokens, and the one redaction."""
