"""The command line: parses flags, builds settings once, connects, runs a command and maps its outcome to an
exit code (`commands`). The only layer that knows about argv, stdout and exit codes."""
