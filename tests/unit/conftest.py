"""Makes the helpers beside the tests importable as top-level modules
(`from glow_graphs import glow_graphs`, `from pass_harness import ...`) whatever pytest's
import mode or the directory pytest is started from."""

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
if HERE not in sys.path:
    sys.path.insert(0, HERE)
