"""``python -m arena.cli``: the same command line as ``arena``."""

from arena.cli.app import main

if __name__ == "__main__":
    main()
