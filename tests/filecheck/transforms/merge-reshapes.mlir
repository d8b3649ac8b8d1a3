// RUN: glow-opt %s --split-input-file --merge-reshapes | FileCheck %s

// A chain of reshapes is one reshape; a chain back to the input's type is nothing.
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

// -----

// A reshape to the same type is its input.
// CHECK-LABEL: func.func @identity
// CHECK-NEXT:    func.return %x
func.func @identity(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %a = glow.reshape %x : tensor<2x3xf32> -> tensor<2x3xf32>
  func.return %a : tensor<2x3xf32>
}

// -----

// Reshapes of constants fold: inline data keeps its bytes, a splat is rebuilt (even when
// shared), a resource gets a new handle viewing the same bytes.
// CHECK-LABEL: func.func @constants
// CHECK-NEXT:    %[[C:.*]] = glow.constant dense<{{\[\[}}1, 2, 3], [4, 5, 6]]> : tensor<2x3xi32>
// CHECK-NEXT:    %[[R:.*]] = glow.splat {value = 2.000000e+00 : f32} : tensor<2x3xf32>
// CHECK-NEXT:    %[[S:.*]] = glow.splat {value = 2.000000e+00 : f32} : tensor<6xf32>
// CHECK-NEXT:    %[[S2:.*]] = glow.splat {value = 2.000000e+00 : f32} : tensor<3x2xf32>
// CHECK-NEXT:    %[[W:.*]] = glow.constant dense_resource<w_reshaped> : tensor<2x2xf32>
// CHECK-NEXT:    func.return %[[C]], %[[S]], %[[S2]], %[[R]], %[[W]]
// CHECK:       dialect_resources
// CHECK-NOT:     w:
// CHECK:         w_reshaped: "0x040000000000803f000000400000404000008040"
// CHECK-NOT:     w:
func.func @constants() -> (tensor<2x3xi32>, tensor<6xf32>, tensor<3x2xf32>, tensor<2x3xf32>, tensor<2x2xf32>) {
  %c = glow.constant dense<[1, 2, 3, 4, 5, 6]> : tensor<6xi32>
  %rc = glow.reshape %c : tensor<6xi32> -> tensor<2x3xi32>
  %s = glow.splat {value = 2.0 : f32} : tensor<2x3xf32>
  %rs = glow.reshape %s : tensor<2x3xf32> -> tensor<6xf32>
  %rs2 = glow.reshape %s : tensor<2x3xf32> -> tensor<3x2xf32>
  %w = glow.constant dense_resource<w> : tensor<4xf32>
  %rw = glow.reshape %w : tensor<4xf32> -> tensor<2x2xf32>
  func.return %rc, %rs, %rs2, %s, %rw : tensor<2x3xi32>, tensor<6xf32>, tensor<3x2xf32>, tensor<2x3xf32>, tensor<2x2xf32>
}

{-#
  dialect_resources: {
    builtin: {
      w: "0x040000000000803F000000400000404000008040"
    }
  }
#-}

// -----

// Must not fire: the constant is used twice (folding would store it twice).
// CHECK-LABEL: func.func @shared_constant
// CHECK-NEXT:    %[[W:.*]] = glow.constant dense_resource<v> : tensor<4xf32>
// CHECK-NEXT:    %[[R:.*]] = glow.reshape %[[W]] : tensor<4xf32> -> tensor<2x2xf32>
// CHECK-NEXT:    func.return %[[R]], %[[W]]
// CHECK-NOT:     v_reshaped
func.func @shared_constant() -> (tensor<2x2xf32>, tensor<4xf32>) {
  %w = glow.constant dense_resource<v> : tensor<4xf32>
  %rw = glow.reshape %w : tensor<4xf32> -> tensor<2x2xf32>
  func.return %rw, %w : tensor<2x2xf32>, tensor<4xf32>
}

{-#
  dialect_resources: {
    builtin: {
      v: "0x040000000000803F000000400000404000008040"
    }
  }
#-}
