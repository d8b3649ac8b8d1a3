// A float literal its type cannot hold (bad input for tools/bad-input.mlir).
func.func @f(%x: tensor<2xf32>) -> tensor<2xf32> {
  %c = glow.clip %x {min = 0.0 : f32, max = 3.5e+38 : f32} : tensor<2xf32>
  func.return %c : tensor<2xf32>
}
