"""The Caffe2 op converters, by concept (fills, nn, tensor, quant)."""
