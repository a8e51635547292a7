"""CLI: the `browserdeck` command, its subcommands and the MCP stdio bridge."""
