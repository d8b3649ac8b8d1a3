"""Runs the lit/FileCheck suite from pytest, so README's one test command runs everything."""

import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
SUITE = os.path.join(os.path.dirname(HERE), "filecheck")


def test_filecheck_suite():
    lit = os.path.join(os.path.dirname(sys.executable), "lit")
    proc = subprocess.run([lit, "-v", SUITE], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout[-20000:] + proc.stderr[-5000:]
