// The xDSL plugin entry point (group `xdsl.universe`): plain `xdsl-opt` parses, verifies
// and prints glow modules (with !glow.quant types and a dense_resource blob), runs its
// own passes and ours on them, and its output is glow-opt input and vice versa.
//
// RUN: xdsl-opt %s | FileCheck %s
// RUN: xdsl-opt %s | glow-opt | FileCheck %s
// RUN: glow-opt %s | xdsl-opt | FileCheck %s
// RUN: xdsl-opt %s --print-op-generic | glow-opt | FileCheck %s
// RUN: xdsl-opt %s -p cse,dce | FileCheck %s --check-prefix=CSE
// RUN: xdsl-opt %s -p eliminate-noops | FileCheck %s --check-prefix=NOOPS
// Weights a pass creates are printed too (xDSL's printer asks our per-module tables):
// RUN: xdsl-opt %repo/examples/conv_relu.mlir -p lower-to-instr | FileCheck %s --check-prefix=INSTR
// RUN: xdsl-opt %repo/examples/conv_relu.mlir -p lower-to-instr --print-op-generic | glow-opt | FileCheck %s --check-prefix=INSTR
// A weight whose blob is missing does not verify, and the message names it:
// RUN: not xdsl-opt %S/inputs/missing-blob.mlir 2>&1 | FileCheck %s --check-prefix=NOBLOB

// CHECK-LABEL: func.func @f(%x: tensor<1x4xf32>, %q: tensor<1x4x!glow.quant<i8, scale = 0.25, offset = -1>>) -> tensor<1x3xf32> {
// CHECK-NEXT:    %w = glow.constant dense_resource<weights> : tensor<4x3xf32>
// CHECK-NEXT:    %b = glow.splat {value = 5.000000e-01 : f32} : tensor<3xf32>
// CHECK-NEXT:    %d = glow.dequantize %q : tensor<1x4x!glow.quant<i8, scale = 0.25, offset = -1>> -> tensor<1x4xf32>
// CHECK-NEXT:    %s = glow.add %x, %d : tensor<1x4xf32>
// CHECK-NEXT:    %s2 = glow.add %x, %d : tensor<1x4xf32>
// CHECK-NEXT:    %r = glow.reshape %s : tensor<1x4xf32> -> tensor<1x4xf32>
// CHECK-NEXT:    %fc = glow.fully_connected %r, %w, %b : (tensor<1x4xf32>, tensor<4x3xf32>, tensor<3xf32>) -> tensor<1x3xf32>
// CHECK-NEXT:    func.return %fc : tensor<1x3xf32>
// CHECK:       weights: "0x04000000000080bf0000803f00000000000000400000c0bf000040400000803e000000bf0000a0400000c0400000e0400000c0c0"

// INSTR:       glow_ir.weight @w constant : memref<4x3x3x3xf32> = dense_resource<w> : tensor<4x3x3x3xf32>
// INSTR:       dialect_resources
// INSTR:       b: "0x0400000000000000cdcccc3dcdcc4c3e9a99993e"
// INSTR-SAME:  w: "0x040000000000003f{{(0000003f)+}}"

// NOBLOB:      Operation does not verify: dense_resource<w> has no data (no blob 'w' in a {-# dialect_resources #-} section)

// CSE:       glow.add
// CSE-NOT:   glow.add
// NOOPS-NOT: glow.reshape

func.func @f(%x: tensor<1x4xf32>, %q: tensor<1x4x!glow.quant<i8, scale = 0.25, offset = -1>>) -> tensor<1x3xf32> {
  %w = glow.constant dense_resource<weights> : tensor<4x3xf32>
  %b = glow.splat {value = 0.5 : f32} : tensor<3xf32>
  %d = glow.dequantize %q : tensor<1x4x!glow.quant<i8, scale = 0.25, offset = -1>> -> tensor<1x4xf32>
  %s = glow.add %x, %d : tensor<1x4xf32>
  %s2 = glow.add %x, %d : tensor<1x4xf32>
  %r = glow.reshape %s : tensor<1x4xf32> -> tensor<1x4xf32>
  %fc = glow.fully_connected %r, %w, %b : (tensor<1x4xf32>, tensor<4x3xf32>, tensor<3xf32>) -> tensor<1x3xf32>
  func.return %fc : tensor<1x3xf32>
}

{-#
  dialect_resources: {
    builtin: {
      weights: "0x04000000000080bf0000803f00000000000000400000c0bf000040400000803e000000bf0000a0400000c0400000e0400000c0c0"
    }
  }
#-}
