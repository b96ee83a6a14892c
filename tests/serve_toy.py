"""`python -m tests.serve_toy PORT REDIS_URL`: a server process that also hosts the toy game."""

import sys

from server.main import serve
from tests import toygame

if __name__ == "__main__":
    toygame.install()
    serve(host="127.0.0.1", port=int(sys.argv[1]), redis_url=sys.argv[2])
