"""The Caffe2 frontend: `import_caffe2(predict_net, init_net, input_shapes)` returns a
`glow` module, as Glow's `Caffe2ModelLoader` loads a Caffe2 model.

    schema.py      caffe2.proto's messages (NetDef, OperatorDef, Argument, ...), built at run time
    loading.py     reading NetDefs from files, bytes or messages, with clear errors
    importer.py    the driver: inputs, the init net's fills, the op loop, outputs
    table.py       the one table: op type -> converter
    op.py          an OperatorDef as converters see it (and the bridge to the ONNX converters)
    converters/    fills, nn, tensor, quant

It shares the ONNX frontend's builder, converters and one-list unsupported-op message.
"""

from glow_mlir.frontends.caffe2.errors import Caffe2ImportError, UnsupportedCaffe2Error
from glow_mlir.frontends.caffe2.importer import import_caffe2
from glow_mlir.frontends.caffe2.schema import NetDef

__all__ = ["import_caffe2", "Caffe2ImportError", "UnsupportedCaffe2Error", "NetDef"]
