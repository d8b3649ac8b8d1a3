// RUN: glow-opt %s --split-input-file --merge-constants | FileCheck %s

// Two blobs with the same bytes under different names become one constant.
// CHECK-LABEL: func.func @same_bytes
// CHECK-NEXT:    %[[A:.*]] = glow.constant dense_resource<w_a> : tensor<2xf32>
// CHECK-NEXT:    %[[B:.*]] = glow.add %[[A]], %[[A]]
// CHECK-NOT:     w_b:
func.func @same_bytes() -> tensor<2xf32> {
  %a = glow.constant dense_resource<w_a> : tensor<2xf32>
  %b = glow.constant dense_resource<w_b> : tensor<2xf32>
  %s = glow.add %a, %b : tensor<2xf32>
  func.return %s : tensor<2xf32>
}
{-#
  dialect_resources: {
    builtin: {
      w_a: "0x040000000000803F00000040",
      w_b: "0x040000000000803F00000040"
    }
  }
#-}

// -----

// Must not merge: different bytes, or same bytes with different types.
// CHECK-LABEL: func.func @different
// CHECK:         dense_resource<v_a> : tensor<2xf32>
// CHECK:         dense_resource<v_b> : tensor<2xf32>
// CHECK:         dense_resource<v_c> : tensor<2xi32>
func.func @different() -> (tensor<2xf32>, tensor<2xi32>) {
  %a = glow.constant dense_resource<v_a> : tensor<2xf32>
  %b = glow.constant dense_resource<v_b> : tensor<2xf32>
  %c = glow.constant dense_resource<v_c> : tensor<2xi32>
  %s = glow.add %a, %b : tensor<2xf32>
  func.return %s, %c : tensor<2xf32>, tensor<2xi32>
}
{-#
  dialect_resources: {
    builtin: {
      v_a: "0x040000000000803F00000040",
      v_b: "0x040000000000803F00004040",
      v_c: "0x040000000000803F00000040"
    }
  }
#-}

// -----

// Weights equal at both ends but not in the middle stay apart (candidates are found by
// their first and last bytes, then compared whole); equal ones merge.
// CHECK-LABEL: func.func @same_edges
// CHECK:         %[[A:.*]] = glow.constant dense_resource<e_a> : tensor<48xf32>
// CHECK-NEXT:    %[[B:.*]] = glow.constant dense_resource<e_b> : tensor<48xf32>
// CHECK-NEXT:    %[[S:.*]] = glow.add %[[A]], %[[B]]
// CHECK-NEXT:    glow.add %[[S]], %[[A]]
func.func @same_edges() -> tensor<48xf32> {
  %a = glow.constant dense_resource<e_a> : tensor<48xf32>
  %b = glow.constant dense_resource<e_b> : tensor<48xf32>
  %c = glow.constant dense_resource<e_c> : tensor<48xf32>
  %s = glow.add %a, %b : tensor<48xf32>
  %t = glow.add %s, %c : tensor<48xf32>
  func.return %t : tensor<48xf32>
}
{-#
  dialect_resources: {
    builtin: {
      e_a: "0x04000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000",
      e_b: "0x040000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000803F0000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000",
      e_c: "0x04000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000"
    }
  }
#-}

// -----

// Found by fuzz/fuzz_mlir.py: a declaration and a body of two blocks were an internal
// error. Equal constants merge within a block, not across blocks (the first need not
// dominate the second).
// CHECK-LABEL: func.func private @declared(tensor<4xf32>)
// CHECK-LABEL: func.func @two_blocks
// CHECK:         glow.constant dense<1.000000e+00>
// CHECK-NOT:     glow.constant
// CHECK:         cf.br ^bb1
// CHECK:         glow.constant dense<1.000000e+00>
// CHECK-NOT:     glow.constant
// CHECK:         func.return
func.func private @declared(tensor<4xf32>)
func.func @two_blocks() -> tensor<4xf32> {
  %a = glow.constant dense<1.0> : tensor<4xf32>
  %b = glow.constant dense<1.0> : tensor<4xf32>
  %s = glow.add %a, %b : tensor<4xf32>
  cf.br ^bb1
^bb1:
  %c = glow.constant dense<1.0> : tensor<4xf32>
  %d = glow.add %s, %c : tensor<4xf32>
  func.return %d : tensor<4xf32>
}
