"""``python -m pyaclnn.signatures [gen] DIR [-o FILE] [--check] [--summary]``."""

import sys

from .cli import main

if __name__ == "__main__":
    args = sys.argv[1:]
    if args[:1] in (["gen"], ["gen-signatures"]):
        args = args[1:]
    sys.exit(main(args))
