// The user's first steps with the instruction IR: a graph lowered by IRGen, then
// share-buffers alone, then the whole instruction pipeline with memory planning.
//
// RUN: glow-opt %s --lower-to-instr | FileCheck %s --check-prefix=IRGEN
// RUN: glow-opt %s --lower-to-instr --share-buffers | FileCheck %s --check-prefix=SHARE
// RUN: glow-opt %s -p 'lower-to-instr,share-buffers' | FileCheck %s --check-prefix=SHARE
// RUN: glow-opt %s --lower-to-instr --glow-instr-pipeline | FileCheck %s --check-prefix=PLAN

// IRGen: one buffer per value, deallocs at the end, the reshape a view copied out.
// IRGEN:      } program(%input0, %w, %b, %output0) {
// IRGEN-NEXT:   %c = glow_ir.alloc_activation : memref<1x4x4x4xf32>
// IRGEN-NEXT:   glow_ir.convolution @out %c, @in %input0, @in %w, @in %b
// IRGEN-NEXT:   %r = glow_ir.alloc_activation : memref<1x4x4x4xf32>
// IRGEN-NEXT:   glow_ir.relu @out %r, @in %c : memref<1x4x4x4xf32>
// IRGEN-NEXT:   %t = glow_ir.alloc_activation : memref<1x4x4x4xf32>
// IRGEN-NEXT:   glow_ir.tanh @out %t, @in %r : memref<1x4x4x4xf32>
// IRGEN-NEXT:   %s = glow_ir.alloc_activation : memref<1x4x4x4xf32>
// IRGEN-NEXT:   glow_ir.element_add @out %s, @in %t, @in %c : memref<1x4x4x4xf32>
// IRGEN-NEXT:   %y = glow_ir.tensor_view %s[0, 0, 0, 0] : memref<1x4x4x4xf32> to memref<1x64xf32>
// IRGEN-NEXT:   glow_ir.copy @out %output0, @in %y : memref<1x64xf32>
// IRGEN-NEXT:   glow_ir.dealloc_activation %s
// IRGEN-NEXT:   glow_ir.dealloc_activation %t
// IRGEN-NEXT:   glow_ir.dealloc_activation %r
// IRGEN-NEXT:   glow_ir.dealloc_activation %c
// IRGEN-NEXT: }

// share-buffers: tanh works in place on relu's buffer (relu's value dies there); the add
// writes straight into the output through a view (copy propagation, the copy is gone) and
// keeps both of its operands (it reads them to the end), so %c is not shared.
// SHARE:      %c = glow_ir.alloc_activation : memref<1x4x4x4xf32>
// SHARE-NEXT: glow_ir.convolution @out %c
// SHARE-NEXT: %r = glow_ir.alloc_activation : memref<1x4x4x4xf32>
// SHARE-NEXT: glow_ir.relu @out %r, @in %c : memref<1x4x4x4xf32>
// SHARE-NEXT: glow_ir.tanh @out %r, @in %r : memref<1x4x4x4xf32>
// SHARE-NEXT: %[[V:.*]] = glow_ir.tensor_view %output0[0, 0] : memref<1x64xf32> to memref<1x4x4x4xf32>
// SHARE-NEXT: glow_ir.element_add @out %[[V]], @in %r, @in %c : memref<1x4x4x4xf32>
// SHARE-NEXT: glow_ir.dealloc_activation %r
// SHARE-NEXT: glow_ir.dealloc_activation %c
// SHARE-NEXT: }
// SHARE-NOT:  glow_ir.copy

// The pipeline plans two live 256-byte buffers into a 512-byte arena; the input, never
// written, is made constant.
// PLAN:      glow_ir.weight @input0 constant input : memref<1x4x4x4xf32>
// PLAN:      %c = glow_ir.alloc_activation {offset = [[OC:[0-9]+]] : i64} : memref<1x4x4x4xf32>
// PLAN:      %r = glow_ir.alloc_activation {offset = {{[0-9]+}} : i64} : memref<1x4x4x4xf32>
// PLAN:      glow_ir.tanh @out %r, @in %r
// PLAN:      } attributes {activations_size = 512 : i64, alignment = 64 : i64}
func.func @chain(%x: tensor<1x4x4x4xf32>) -> tensor<1x64xf32> {
  %w = glow.constant dense<0.5> : tensor<4x4x1x1xf32>
  %b = glow.constant dense<0.1> : tensor<4xf32>
  %c = glow.convolution %x, %w, %b {kernels = array<i64: 1, 1>} : (tensor<1x4x4x4xf32>, tensor<4x4x1x1xf32>, tensor<4xf32>) -> tensor<1x4x4x4xf32>
  %r = glow.relu %c : tensor<1x4x4x4xf32>
  %t = glow.tanh %r : tensor<1x4x4x4xf32>
  %s = glow.add %t, %c : tensor<1x4x4x4xf32>
  %y = glow.reshape %s : tensor<1x4x4x4xf32> -> tensor<1x64xf32>
  func.return %y : tensor<1x64xf32>
}
