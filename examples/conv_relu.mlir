// A small graph: convolution + relu, with a duplicated relu (cse merges it) and a dead add
// (dce removes it). Run: glow-opt examples/conv_relu.mlir --cse --dce
func.func @conv_relu(%x: tensor<1x3x8x8xf32>) -> tensor<1x4x8x8xf32> {
  %w = glow.constant dense<0.5> : tensor<4x3x3x3xf32>
  %b = glow.constant dense<[0.0, 0.1, 0.2, 0.3]> : tensor<4xf32>
  %y = glow.convolution %x, %w, %b {kernels = array<i64: 3, 3>, strides = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, group = 1 : i64} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>, tensor<4xf32>) -> tensor<1x4x8x8xf32>
  %r1 = glow.relu %y : tensor<1x4x8x8xf32>
  %r2 = glow.relu %y : tensor<1x4x8x8xf32>
  %dead = glow.add %r1, %r2 : tensor<1x4x8x8xf32>
  func.return %r1 : tensor<1x4x8x8xf32>
}
