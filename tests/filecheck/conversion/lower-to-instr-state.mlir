// RUN: glow-opt %s --split-input-file --lower-to-instr | FileCheck %s

// State: an argument with glow.initial is one mutable weight holding that value (no
// placeholder); the result that glow.updates it is written over it by the instruction
// computing it, which reads it through an in-place operand pair: no copy, no output.
// CHECK-LABEL:  glow_ir.func @step declare {
// CHECK-NEXT:     glow_ir.weight @x mutable input : memref<4xf32>
// CHECK-NEXT:     glow_ir.weight @w mutable : memref<4xf32> = dense_resource<w> : tensor<4xf32>
// CHECK-NEXT:     glow_ir.weight @y mutable output : memref<4xf32>
// CHECK-NEXT:   } program(%x, %w, %y) {
// CHECK-NEXT:     glow_ir.element_mul @out %y, @in %w, @in %x : memref<4xf32>
// CHECK-NEXT:     glow_ir.element_sub @out %w, @in %w, @in %x : memref<4xf32>
// CHECK-NEXT:   }
func.func @step(%x: tensor<4xf32> {glow.name = "x"}, %w: tensor<4xf32> {glow.name = "w", glow.initial = dense_resource<w> : tensor<4xf32>}) -> (tensor<4xf32> {glow.name = "y"}, tensor<4xf32> {glow.name = "w.updated", glow.updates = "w"}) {
  %y = glow.mul %w, %x : tensor<4xf32>
  %n = glow.sub %w, %x : tensor<4xf32>
  func.return %y, %n : tensor<4xf32>, tensor<4xf32>
}

{-#
  dialect_resources: {
    builtin: {
      w: "0x040000000000003f0000803f0000c03f00000040"
    }
  }
#-}

// -----

// Must not write in place: the old value is read after the update is computed, so the
// update goes to an activation and is copied into the weight at the end.
// CHECK-LABEL:  glow_ir.func @late_read declare {
// CHECK:          glow_ir.weight @w mutable : memref<4xf32> = dense_resource<w> : tensor<4xf32>
// CHECK:        } program(%x, %w, %y) {
// CHECK-NEXT:     %[[N:.*]] = glow_ir.alloc_activation : memref<4xf32>
// CHECK-NEXT:     glow_ir.element_sub @out %[[N]], @in %w, @in %x : memref<4xf32>
// CHECK-NEXT:     glow_ir.element_mul @out %y, @in %w, @in %x : memref<4xf32>
// CHECK-NEXT:     glow_ir.copy @out %w, @in %[[N]] : memref<4xf32>
func.func @late_read(%x: tensor<4xf32> {glow.name = "x"}, %w: tensor<4xf32> {glow.name = "w", glow.initial = dense_resource<w> : tensor<4xf32>}) -> (tensor<4xf32> {glow.name = "w.updated", glow.updates = "w"}, tensor<4xf32> {glow.name = "y"}) {
  %n = glow.sub %w, %x : tensor<4xf32>
  %y = glow.mul %w, %x : tensor<4xf32>
  func.return %n, %y : tensor<4xf32>, tensor<4xf32>
}

{-#
  dialect_resources: {
    builtin: {
      w: "0x040000000000003f0000803f0000c03f00000040"
    }
  }
#-}

// -----

// Must not write in place: the update reads the state but not element by element (a
// transpose has no in-place operand pair).
// CHECK-LABEL:  glow_ir.func @through_view
// CHECK:          glow_ir.transpose @out %[[T:[a-z0-9_]+]], @in %w
// CHECK:          glow_ir.copy @out %w, @in %[[T]] : memref<2x2xf32>
func.func @through_view(%w: tensor<2x2xf32> {glow.name = "w", glow.initial = dense_resource<w> : tensor<2x2xf32>}) -> (tensor<2x2xf32> {glow.name = "w.updated", glow.updates = "w"}) {
  %t = glow.transpose %w {shuffle = array<i64: 1, 0>} : tensor<2x2xf32> -> tensor<2x2xf32>
  func.return %t : tensor<2x2xf32>
}

{-#
  dialect_resources: {
    builtin: {
      w: "0x040000000000003f0000803f0000c03f00000040"
    }
  }
#-}
