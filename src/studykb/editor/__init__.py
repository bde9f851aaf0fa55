"""Writing with studykb beside you: the watch that keeps the state fresh, the socket
that lets it answer other commands, and the language server."""
