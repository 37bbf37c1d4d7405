#!/usr/bin/env python3
"""Writes abi/manifest.json, the one model of the C ABI that every binding generator reads.

Reads include/cudnnfe/cudnnfe.h through scripts/cudnnfe_abi.py (pycparser):
functions, structs (C field types, offsets, sizes, stated defaults, which
init function fills them and which functions take them), integer constants
grouped by enumeration, opaque handles. It writes no binding code: the
generators of each binding (bindings/*/gen*, listed in abi/README.md) do.

Usage: python3 scripts/gen_abi_manifest.py [--check] [--header H] [--out F]
  --check writes nothing and exits 1 when the committed manifest is stale
  (abi/test_manifest.py runs it).
"""
import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import cudnnfe_abi  # noqa: E402


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--header", default=cudnnfe_abi.DEFAULT_HEADER)
    ap.add_argument("--out", default=cudnnfe_abi.DEFAULT_MANIFEST)
    ap.add_argument("--check", action="store_true",
                    help="write nothing; exit 1 if the output is missing or stale")
    args = ap.parse_args(argv)
    try:
        text = cudnnfe_abi.render(cudnnfe_abi.manifest_from_header(args.header))
    except (cudnnfe_abi.HeaderError, cudnnfe_abi.ParseError) as e:
        print("gen_abi_manifest.py: %s: %s" % (args.header, e), file=sys.stderr)
        return 2
    return cudnnfe_abi.write_generated(args.out, text, args.check,
                                       "python3 scripts/gen_abi_manifest.py", announce=True)


if __name__ == "__main__":
    sys.exit(main())
