"""Serve the built book on http://127.0.0.1:PORT/ (``make serve [PORT=8000]``).

A port that is not a whole number from 1 to 65535, or one already in use, is one line on
stderr and exit code 2: the line announced is the port served. Only the standard library.
"""

import functools
import http.server
import sys
from pathlib import Path


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if len(argv) != 2:
        print("usage: tools/serve.py DIRECTORY PORT", file=sys.stderr)
        return 2
    directory, text = Path(argv[0]), argv[1].strip()
    if not (text.isascii() and text.isdigit() and 1 <= int(text) <= 65535):
        print(f"serve: PORT={text!r:.40}: allowed a whole number 1 <= PORT <= 65535 "
              "(make serve PORT=8000)", file=sys.stderr)
        return 2
    port = int(text)
    if not (directory / "index.html").is_file():
        print(f"serve: no book at {directory}: run make book first", file=sys.stderr)
        return 1
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(directory))
    try:
        server = http.server.ThreadingHTTPServer(("127.0.0.1", port), handler)
    except OSError as e:
        print(f"serve: port {port} on 127.0.0.1 cannot be used ({e.strerror or e}): choose "
              "another with make serve PORT=...", file=sys.stderr)
        return 2
    print(f"serving {directory} on http://127.0.0.1:{port}/ (Ctrl-C stops)", flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        print("serve: stopped")
    finally:
        server.server_close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
