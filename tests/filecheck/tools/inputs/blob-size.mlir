func.func @f() -> tensor<2x2xf32> {
  %w = glow.constant dense_resource<w> : tensor<2x2xf32>
  func.return %w : tensor<2x2xf32>
}

{-#
  dialect_resources: {
    builtin: {
      w: "0x040000000000803f00000040"
    }
  }
#-}
