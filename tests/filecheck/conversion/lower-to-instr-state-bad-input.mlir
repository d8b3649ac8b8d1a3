// What lower-to-instr refuses of state (glow.initial arguments, glow.updates results): an
// error at the function (exit status 1, no traceback).
// RUN: glow-opt %s --split-input-file --lower-to-instr --verify-diagnostics

// expected-error @+1 {{'func.func' op result #0 has glow.updates = "w", which names no argument with glow.initial}}
func.func @not_state(%w: tensor<4xf32> {glow.name = "w"}) -> (tensor<4xf32> {glow.updates = "w"}) {
  %n = glow.neg %w : tensor<4xf32>
  func.return %n : tensor<4xf32>
}

// -----

// expected-error @+1 {{'func.func' op state argument 'w' is updated twice}}
func.func @twice(%w: tensor<4xf32> {glow.name = "w", glow.initial = dense_resource<w> : tensor<4xf32>}) -> (tensor<4xf32> {glow.updates = "w"}, tensor<4xf32> {glow.updates = "w"}) {
  %n = glow.neg %w : tensor<4xf32>
  %m = glow.abs %w : tensor<4xf32>
  func.return %n, %m : tensor<4xf32>, tensor<4xf32>
}

{-#
  dialect_resources: {
    builtin: {
      w: "0x040000000000003f0000803f0000c03f00000040"
    }
  }
#-}
