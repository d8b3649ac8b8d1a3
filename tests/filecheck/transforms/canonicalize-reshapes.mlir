// RUN: glow-opt %s --split-input-file -p canonicalize | FileCheck %s

// xDSL's canonicalize runs glow.reshape's canonicalization pattern (the one
// merge-reshapes applies): a chain of reshapes is one reshape; a chain back to the
// input's type is nothing.
// CHECK-LABEL: func.func @chains
// CHECK-NEXT:    %[[R:.*]] = glow.reshape %x : tensor<2x3x4xf32> -> tensor<4x6xf32>
// CHECK-NEXT:    func.return %[[R]], %x
func.func @chains(%x: tensor<2x3x4xf32>) -> (tensor<4x6xf32>, tensor<2x3x4xf32>) {
  %a = glow.reshape %x : tensor<2x3x4xf32> -> tensor<24xf32>
  %b = glow.reshape %a : tensor<24xf32> -> tensor<6x4xf32>
  %c = glow.reshape %b : tensor<6x4xf32> -> tensor<4x6xf32>
  %d = glow.reshape %x : tensor<2x3x4xf32> -> tensor<6x4xf32>
  %e = glow.reshape %d : tensor<6x4xf32> -> tensor<2x3x4xf32>
  func.return %c, %e : tensor<4x6xf32>, tensor<2x3x4xf32>
}

// -----

// The inner reshape has another user: it stays, the outer one reads %x directly.
// CHECK-LABEL: func.func @shared_inner
// CHECK-NEXT:    %[[A:.*]] = glow.reshape %x : tensor<2x3xf32> -> tensor<6xf32>
// CHECK-NEXT:    %[[R:.*]] = glow.relu %[[A]]
// CHECK-NEXT:    %[[B:.*]] = glow.reshape %x : tensor<2x3xf32> -> tensor<3x2xf32>
// CHECK-NEXT:    func.return %[[R]], %[[B]]
func.func @shared_inner(%x: tensor<2x3xf32>) -> (tensor<6xf32>, tensor<3x2xf32>) {
  %a = glow.reshape %x : tensor<2x3xf32> -> tensor<6xf32>
  %r = glow.relu %a : tensor<6xf32>
  %b = glow.reshape %a : tensor<6xf32> -> tensor<3x2xf32>
  func.return %r, %b : tensor<6xf32>, tensor<3x2xf32>
}
