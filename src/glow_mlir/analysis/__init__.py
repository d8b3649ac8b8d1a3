"""Analyses of the graph and instruction IR: live tensor bytes of a schedule, Graphviz views.

Analyses read IR and never change it; passes (`transforms/`) and tools call them.
"""
