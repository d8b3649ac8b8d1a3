func.func @f() -> tensor<2x2xf32> {
  %w = glow.constant dense_resource<w> : tensor<2x2xf32>
  func.return %w : tensor<2x2xf32>
}
