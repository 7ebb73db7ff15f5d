import sys

try:  # Ctrl-C while the command line loads: one line, as later
    from .book.cli import main
except KeyboardInterrupt:
    print("attnbook: interrupted before anything ran", file=sys.stderr)
    sys.exit(130)

sys.exit(main())
