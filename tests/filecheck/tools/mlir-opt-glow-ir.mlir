// REQUIRES: mlir-opt
//
// The instruction IR is real MLIR too: upstream mlir-opt-22 reads glow_ir's generic form
// (two regions, the program's block arguments standing for the weights, access kinds as a
// property, dense_resource weights), and glow-opt reads mlir-opt's output back unchanged.
// Upstream memrefs only take element types that implement MemRefElementTypeInterface, so
// a memref of `!glow.quant` (an unregistered type there) is ours alone; this file has none.
//
// RUN: glow-opt %s --print-op-generic | mlir-opt-22 --allow-unregistered-dialect | glow-opt | FileCheck %s
// RUN: glow-opt %s --print-op-generic | mlir-opt-22 --allow-unregistered-dialect --mlir-print-op-generic | FileCheck %s --check-prefix=UPSTREAM

// CHECK-LABEL: glow_ir.func @main declare {
// CHECK-NEXT:    glow_ir.weight @x mutable input : memref<1x2x4x4xf32>
// CHECK-NEXT:    glow_ir.weight @w constant : memref<3x2x1x1xf32> = dense_resource<w> : tensor<3x2x1x1xf32>
// CHECK-NEXT:    glow_ir.weight @b constant : memref<3xf32> = dense_resource<b> : tensor<3xf32>
// CHECK-NEXT:    glow_ir.weight @y mutable output : memref<1x48xf32>
// CHECK-NEXT:  } program(%x, %w, %b, %y) {
// CHECK-NEXT:    %[[C:[a-z0-9]+]] = glow_ir.alloc_activation {offset = 0 : i64} : memref<1x3x4x4xf32>
// CHECK-NEXT:    glow_ir.convolution @out %[[C]], @in %x, @in %w, @in %b {kernels = array<i64: 1, 1>} : memref<1x3x4x4xf32>, memref<1x2x4x4xf32>, memref<3x2x1x1xf32>, memref<3xf32>
// CHECK-NEXT:    glow_ir.relu @out %[[C]], @in %[[C]] : memref<1x3x4x4xf32>
// CHECK-NEXT:    %[[V:[a-z0-9]+]] = glow_ir.tensor_view %[[C]][0, 0, 0, 0] : memref<1x3x4x4xf32> to memref<1x48xf32>
// CHECK-NEXT:    glow_ir.copy @out %y, @in %[[V]] : memref<1x48xf32>
// CHECK-NEXT:    glow_ir.dealloc_activation %[[C]] : memref<1x3x4x4xf32>
// CHECK-NEXT:  } attributes {activations_size = 192 : i64, alignment = 64 : i64}
// CHECK:       dialect_resources
// CHECK:         b: "0x04000000

// UPSTREAM:      "glow_ir.func"() <{sym_name = "main"}> ({
// UPSTREAM:      ^bb0(%arg0: memref<1x2x4x4xf32>, %arg1: memref<3x2x1x1xf32>, %arg2: memref<3xf32>, %arg3: memref<1x48xf32>):
// UPSTREAM:        "glow_ir.relu"(%0, %0) <{access = ["out", "in"]}> : (memref<1x3x4x4xf32>, memref<1x3x4x4xf32>) -> ()
glow_ir.func @main declare {
  glow_ir.weight @x mutable input : memref<1x2x4x4xf32>
  glow_ir.weight @w constant : memref<3x2x1x1xf32> = dense_resource<w> : tensor<3x2x1x1xf32>
  glow_ir.weight @b constant : memref<3xf32> = dense_resource<b> : tensor<3xf32>
  glow_ir.weight @y mutable output : memref<1x48xf32>
} program(%x, %w, %b, %y) {
  %c = glow_ir.alloc_activation {offset = 0 : i64} : memref<1x3x4x4xf32>
  glow_ir.convolution @out %c, @in %x, @in %w, @in %b {kernels = array<i64: 1, 1>} : memref<1x3x4x4xf32>, memref<1x2x4x4xf32>, memref<3x2x1x1xf32>, memref<3xf32>
  glow_ir.relu @out %c, @in %c : memref<1x3x4x4xf32>
  %v = glow_ir.tensor_view %c[0, 0, 0, 0] : memref<1x3x4x4xf32> to memref<1x48xf32>
  glow_ir.copy @out %y, @in %v : memref<1x48xf32>
  glow_ir.dealloc_activation %c : memref<1x3x4x4xf32>
} attributes {activations_size = 192 : i64, alignment = 64 : i64}

{-#
  dialect_resources: {
    builtin: {
      w: "0x040000000000803F000000400000404000008040000000000000803F",
      b: "0x040000000000000000000000CDCCCC3D"
    }
  }
#-}
