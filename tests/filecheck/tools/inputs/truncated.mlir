func.func @f(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) -> tensor<1x4x8x8xf32> {
  %b = glow.splat {value = 0.0 : f32} : tensor<4xf32>
  %0 = glow.convolution %x, %w, %b {kernels = array<i64: 3, 3>, pads = array<i64: 1, 1
