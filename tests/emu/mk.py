#!/usr/bin/env python3
"""mk.py IN.cu OUT.cu - a generated unit made ready for emu.h (unit.py: inline
PTX interpreted, each block's __shared__ variables its own); kept for
rows.sh, which calls it by this name."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import unit  # noqa: E402

try:
    text = unit.rewrite(open(sys.argv[1]).read())
except ValueError as e:
    sys.exit("mk.py: %s" % e)
open(sys.argv[2], "w").write(text)
