"""Makes the suite's modules importable by their names (`import conformance`) and prints
the per-op pass table after a pytest run that ran conformance cases."""

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
if HERE not in sys.path:
    sys.path.insert(0, HERE)

import conformance  # noqa: E402


def pytest_terminal_summary(terminalreporter):
    if not conformance.RECORDED:
        return
    terminalreporter.section("ONNX node conformance")
    terminalreporter.write_line(conformance.per_op_table(conformance.RECORDED,
                                                         conformance.read_expected_failures()))
