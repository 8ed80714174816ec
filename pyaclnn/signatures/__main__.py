"""``python -m pyaclnn.signatures [gen] DIR [-o FILE] [--check] [--summary]``: the operator registry;
``python -m pyaclnn.signatures capi [--headers DIR] [--check]``: the ctypes mirror of pyaclnn.capi."""

import sys

from .cli import main

if __name__ == "__main__":
    args = sys.argv[1:]
    if args[:1] == ["capi"]:
        from .capi_mirror import main as capi_main
        sys.exit(capi_main(args[1:]))
    if args[:1] in (["gen"], ["gen-signatures"]):
        args = args[1:]
    sys.exit(main(args))
