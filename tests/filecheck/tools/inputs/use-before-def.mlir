func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
  %1 = glow.tanh %0 : tensor<4xf32>
  %0 = glow.relu %x : tensor<4xf32>
  func.return %1 : tensor<4xf32>
}
