// A graph of batch 0, which differentiate refuses (transforms/differentiate-options.mlir).
func.func @fc(%x: tensor<0x3xf32>) -> tensor<0x2xf32> {
  %w = glow.constant dense_resource<w> : tensor<3x2xf32>
  %y = glow.mat_mul %x, %w : (tensor<0x3xf32>, tensor<3x2xf32>) -> tensor<0x2xf32>
  func.return %y : tensor<0x2xf32>
}

{-#
  dialect_resources: {
    builtin: {
      w: "0x040000000000803f000000400000404000008040000000000000803f"
    }
  }
#-}
