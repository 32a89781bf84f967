"""The harness: everything between the arena and a bot's process. The protocol's messages,
resource limits and usage, the sandbox, the launcher that starts, measures and kills bots,
one bot process with its deadlines and logs, and an in-process player.

Imports the rules core only.
"""
