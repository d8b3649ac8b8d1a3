func.func @ok(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = glow.relu %x : tensor<4xf32>
  func.return %0 : tensor<4xf32>
}

func.func @bad(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>, %b: tensor<4xf32>) -> tensor<1x4x8x8xf32> {
  %r = glow.relu %x : tensor<1x3x8x8xf32>
  %0 = glow.convolution %r, %w, %b {kernels = array<i64: 3, 3>, group = 2 : i64} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>, tensor<4xf32>) -> tensor<1x4x8x8xf32>
  func.return %0 : tensor<1x4x8x8xf32>
}
