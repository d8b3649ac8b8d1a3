// RUN: glow-opt %s --split-input-file --reduce-mean-to-avg-pool | FileCheck %s

// CHECK-LABEL: func.func @spatial_mean
// CHECK-NEXT:    %[[P:.*]] = glow.avg_pool %x {kernels = array<i64: 7, 5>, strides = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>} : tensor<2x8x7x5xf32> -> tensor<2x8x1x1xf32>
// CHECK-NEXT:    %[[R:.*]] = glow.reshape %[[P]] : tensor<2x8x1x1xf32> -> tensor<2x8xf32>
// CHECK-NEXT:    func.return %[[R]]
func.func @spatial_mean(%x: tensor<2x8x7x5xf32>) -> tensor<2x8xf32> {
  %m = glow.batched_reduce_mean %x {axes = array<i64: 3, 2>} : tensor<2x8x7x5xf32> -> tensor<2x8xf32>
  func.return %m : tensor<2x8xf32>
}

// -----

// Must not fire: other axes, other ranks.
// CHECK-LABEL: func.func @other_means
// CHECK-NOT:     glow.avg_pool
// CHECK:         glow.batched_reduce_mean %x {axes = array<i64: 1, 2>}
// CHECK:         glow.batched_reduce_mean %y {axes = array<i64: 1, 2>}
func.func @other_means(%x: tensor<2x8x7x5xf32>, %y: tensor<2x7x5xf32>) -> (tensor<2x5xf32>, tensor<2xf32>) {
  %a = glow.batched_reduce_mean %x {axes = array<i64: 1, 2>} : tensor<2x8x7x5xf32> -> tensor<2x5xf32>
  %b = glow.batched_reduce_mean %y {axes = array<i64: 1, 2>} : tensor<2x7x5xf32> -> tensor<2xf32>
  func.return %a, %b : tensor<2x5xf32>, tensor<2xf32>
}
