"""``python -m browserdeck.config > docs/configuration.md``."""

from browserdeck.config.docs import settings_markdown

print(settings_markdown(), end="")
