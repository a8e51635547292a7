"""What an agent and a caller may reach: endpoints, URLs, local files, elements."""
