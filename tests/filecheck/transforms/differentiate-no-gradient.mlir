// differentiate refuses a graph with ops between a trainable weight and the loss that have
// no gradient rule: one error at each, after a summary (ops off that way are fine).
// RUN: glow-opt %s --split-input-file -p 'differentiate{loss=mse}' --verify-diagnostics
// RUN: not glow-opt %s --split-input-file -p 'differentiate{loss=mse}' 2>&1 | FileCheck %s
// RUN: not glow-opt %s --split-input-file -p 'differentiate{loss=hinge}' 2>&1 | FileCheck %s --check-prefix=LOSS

// CHECK:      glow-opt: error: 2 op(s) on the way from the weights to the loss have no gradient (differentiate knows: glow.adaptive_avg_pool,
// CHECK-NEXT: {{.*}}differentiate-no-gradient.mlir:[[# @LINE + 12]]:8: error: 'glow.floor' op has no gradient
// CHECK-NEXT: {{.*}}differentiate-no-gradient.mlir:[[# @LINE + 6]]:8: error: 'glow.sin' op has no gradient
// LOSS: glow-opt: error: invalid pass pipeline 'differentiate{loss=hinge}': differentiate: unknown loss 'hinge' (the losses: cross_entropy, mse)
func.func @f(%x: tensor<2x3xf32>) -> tensor<2x2xf32> {
  %w = glow.constant dense_resource<w> : tensor<3x2xf32>
  %h = glow.mat_mul %x, %w : (tensor<2x3xf32>, tensor<3x2xf32>) -> tensor<2x2xf32>
  // expected-error @+1 {{'glow.sin' op has no gradient}}
  %0 = glow.sin %h : tensor<2x2xf32>
  // the input's own path needs no gradient: no error here
  %1 = glow.cos %x : tensor<2x3xf32>
  %2 = glow.mat_mul %1, %w : (tensor<2x3xf32>, tensor<3x2xf32>) -> tensor<2x2xf32>
  // expected-error @+1 {{'glow.floor' op has no gradient}}
  %3 = glow.floor %0 : tensor<2x2xf32>
  %4 = glow.add %3, %2 : tensor<2x2xf32>
  func.return %4 : tensor<2x2xf32>
}

{-#
  dialect_resources: {
    builtin: {
      w: "0x040000000000803f000000400000404000008040000000000000803f"
    }
  }
#-}

// -----

// Forms without a gradient here: an activation fused into its producer (fuse-activations
// runs after differentiate), a reflected pad.
func.func @forms(%x: tensor<1x1x4x4xf32>) -> tensor<1x2x6x4xf32> {
  %w = glow.constant dense_resource<w> : tensor<2x1x1x1xf32>
  %b = glow.constant dense_resource<b> : tensor<2xf32>
  // expected-error @+1 {{'glow.convolution' op has no gradient: it has a fused activation ('relu'); differentiate runs before fuse-activations (on the graph as imported)}}
  %c = glow.convolution %x, %w, %b {kernels = array<i64: 1, 1>, fused_activation = "relu"} : (tensor<1x1x4x4xf32>, tensor<2x1x1x1xf32>, tensor<2xf32>) -> tensor<1x2x4x4xf32>
  // expected-error @+1 {{'glow.pad' op has no gradient: it pads in mode 'reflect' (only 'constant' has one)}}
  %p = glow.pad %c {pads = array<i64: 0, 0, 1, 0, 0, 0, 1, 0>, mode = "reflect"} : tensor<1x2x4x4xf32> -> tensor<1x2x6x4xf32>
  func.return %p : tensor<1x2x6x4xf32>
}

{-#
  dialect_resources: {
    builtin: {
      w: "0x040000000000803f00000040",
      b: "0x040000000000003f000080bf"
    }
  }
#-}
