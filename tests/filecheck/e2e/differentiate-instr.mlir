// RUN: glow-opt %s -p 'differentiate{loss=mse learning-rate=0.5 momentum=0.9},glow-graph-pipeline{backend=cpu},lower-to-instr,glow-instr-pipeline' | FileCheck %s

// A training step through the whole pipeline: each trained weight and its momentum are one
// mutable weight holding its initial value (no input or output placeholder for them), and
// the SGD update writes over them in place: the momentum m' = 0.9 m + g straight into m,
// the weight w' = w - 0.5 m' by an instruction whose @out is the weight it reads (an
// in-place pair). No copy into a weight, none out of one.
// CHECK-LABEL:  glow_ir.func @fc declare {
// CHECK-NEXT:     glow_ir.weight @input0 constant input : memref<2x3xf32>
// CHECK-NEXT:     glow_ir.weight @labels constant input : memref<2x2xf32>
// CHECK-NEXT:     glow_ir.weight @w mutable : memref<3x2xf32> = dense_resource<w> : tensor<3x2xf32>
// CHECK-NEXT:     glow_ir.weight @w.momentum mutable : memref<3x2xf32> = dense_resource<w.momentum> : tensor<3x2xf32>
// CHECK-NOT:      glow_ir.weight @w.updated
// CHECK-NOT:      glow_ir.weight @w.momentum.updated
// CHECK:          glow_ir.weight @output0 mutable output : memref<2x2xf32>
// CHECK-NEXT:     glow_ir.weight @loss mutable output : memref<f32>
// CHECK-NEXT:   } program(
// CHECK-NOT:      glow_ir.copy
// CHECK:          glow_ir.element_mul @out %[[M:[a-z0-9_]+]], @in %w.momentum,
// CHECK-NOT:      glow_ir.copy
// CHECK:          glow_ir.element_add @out %w.momentum, @in %[[M]], @in %{{.*}} : memref<3x2xf32>
// CHECK-NOT:      glow_ir.copy
// CHECK:          glow_ir.element_mul @out %[[S:[a-z0-9_]+]], @in %w.momentum, @in %{{.*}} : memref<3x2xf32>
// CHECK-NEXT:     glow_ir.element_sub @out %w, @in %w, @in %[[S]] : memref<3x2xf32>
// CHECK-NOT:      glow_ir.copy
// CHECK:        }
func.func @fc(%x: tensor<2x3xf32>) -> tensor<2x2xf32> {
  %w = glow.constant dense_resource<w> : tensor<3x2xf32>
  %y = glow.mat_mul %x, %w : (tensor<2x3xf32>, tensor<3x2xf32>) -> tensor<2x2xf32>
  func.return %y : tensor<2x2xf32>
}

{-#
  dialect_resources: {
    builtin: {
      w: "0x040000000000803f000000400000404000008040000000000000803f"
    }
  }
#-}
