"""The PyTorch frontend tests build their models with `benchmarks/torch_corpus.py`, the
corpus the torch benchmark times (tests read the benchmarks' corpora, never the reverse)."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
