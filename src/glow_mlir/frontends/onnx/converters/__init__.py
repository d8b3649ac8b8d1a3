"""ONNX op converters, one module per concept; `table.py` maps op types to them."""
