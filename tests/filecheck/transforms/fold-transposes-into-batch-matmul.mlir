// RUN: glow-opt %s --split-input-file --fold-transposes-into-batch-matmul | FileCheck %s

// Attention: Q [1, S, H, D] -> [H, S, D] and K -> [H, D, S], each a transpose and a
// reshape merging the leading dims: both read strided, both copies gone.
// CHECK-LABEL:  func.func @attention_scores
// CHECK-NOT:      glow.transpose
// CHECK:          %[[M:.*]] = glow.batch_mat_mul %q, %k {lhs_perm = array<i64: 0, 2, 1, 3>, rhs_perm = array<i64: 0, 2, 3, 1>} : (tensor<1x5x3x4xf32>, tensor<1x5x3x4xf32>) -> tensor<3x5x5xf32>
// CHECK-NOT:      glow.transpose
// CHECK-NEXT:     func.return %[[M]]
func.func @attention_scores(%q: tensor<1x5x3x4xf32>, %k: tensor<1x5x3x4xf32>) -> tensor<3x5x5xf32> {
  %qt = glow.transpose %q {shuffle = array<i64: 0, 2, 1, 3>} : tensor<1x5x3x4xf32> -> tensor<1x3x5x4xf32>
  %qr = glow.reshape %qt : tensor<1x3x5x4xf32> -> tensor<3x5x4xf32>
  %kt = glow.transpose %k {shuffle = array<i64: 0, 2, 3, 1>} : tensor<1x5x3x4xf32> -> tensor<1x3x4x5xf32>
  %kr = glow.reshape %kt : tensor<1x3x4x5xf32> -> tensor<3x4x5xf32>
  %s = glow.batch_mat_mul %qr, %kr : (tensor<3x5x4xf32>, tensor<3x4x5xf32>) -> tensor<3x5x5xf32>
  func.return %s : tensor<3x5x5xf32>
}

// -----

// A rank-3 transpose feeding the matmul directly (no reshape): rhs [B, M, K] -> [B, K, M].
// CHECK-LABEL:  func.func @rank3_rhs
// CHECK-NEXT:     %[[M:.*]] = glow.batch_mat_mul %a, %b {rhs_perm = array<i64: 0, 2, 1>} : (tensor<2x3x4xf32>, tensor<2x5x4xf32>) -> tensor<2x3x5xf32>
// CHECK-NEXT:     func.return %[[M]]
func.func @rank3_rhs(%a: tensor<2x3x4xf32>, %b: tensor<2x5x4xf32>) -> tensor<2x3x5xf32> {
  %bt = glow.transpose %b {shuffle = array<i64: 0, 2, 1>} : tensor<2x5x4xf32> -> tensor<2x4x5xf32>
  %m = glow.batch_mat_mul %a, %bt : (tensor<2x3x4xf32>, tensor<2x4x5xf32>) -> tensor<2x3x5xf32>
  func.return %m : tensor<2x3x5xf32>
}

// -----

// Not folded: the transpose has another user (the copy stays, folding saves nothing).
// CHECK-LABEL:  func.func @other_user
// CHECK-NEXT:     %[[T:.*]] = glow.transpose %b
// CHECK-NEXT:     %[[M:.*]] = glow.batch_mat_mul %a, %[[T]] : (tensor<2x3x4xf32>, tensor<2x4x5xf32>) -> tensor<2x3x5xf32>
// CHECK-NEXT:     func.return %[[M]], %[[T]]
func.func @other_user(%a: tensor<2x3x4xf32>, %b: tensor<2x5x4xf32>) -> (tensor<2x3x5xf32>, tensor<2x4x5xf32>) {
  %bt = glow.transpose %b {shuffle = array<i64: 0, 2, 1>} : tensor<2x5x4xf32> -> tensor<2x4x5xf32>
  %m = glow.batch_mat_mul %a, %bt : (tensor<2x3x4xf32>, tensor<2x4x5xf32>) -> tensor<2x3x5xf32>
  func.return %m, %bt : tensor<2x3x5xf32>, tensor<2x4x5xf32>
}

// -----

// Not folded: the reshape has another user.
// CHECK-LABEL:  func.func @reshape_other_user
// CHECK:          glow.transpose
// CHECK:          glow.batch_mat_mul %{{.*}}, %{{.*}} : (tensor<3x5x4xf32>, tensor<3x4x5xf32>)
func.func @reshape_other_user(%q: tensor<1x5x3x4xf32>, %b: tensor<3x4x5xf32>) -> (tensor<3x5x5xf32>, tensor<3x5x4xf32>) {
  %qt = glow.transpose %q {shuffle = array<i64: 0, 2, 1, 3>} : tensor<1x5x3x4xf32> -> tensor<1x3x5x4xf32>
  %qr = glow.reshape %qt : tensor<1x3x5x4xf32> -> tensor<3x5x4xf32>
  %m = glow.batch_mat_mul %qr, %b : (tensor<3x5x4xf32>, tensor<3x4x5xf32>) -> tensor<3x5x5xf32>
  func.return %m, %qr : tensor<3x5x5xf32>, tensor<3x5x4xf32>
}

// -----

// Not folded: the permutation does not fit. lhs: the shuffle moves the last dim (a row
// of lhs would be strided).
// CHECK-LABEL:  func.func @lhs_perm_moves_last_dim
// CHECK-NEXT:     %[[T:.*]] = glow.transpose %a
// CHECK-NEXT:     %[[M:.*]] = glow.batch_mat_mul %[[T]], %b : (tensor<2x3x4xf32>, tensor<2x4x5xf32>) -> tensor<2x3x5xf32>
func.func @lhs_perm_moves_last_dim(%a: tensor<2x4x3xf32>, %b: tensor<2x4x5xf32>) -> tensor<2x3x5xf32> {
  %at = glow.transpose %a {shuffle = array<i64: 0, 2, 1>} : tensor<2x4x3xf32> -> tensor<2x3x4xf32>
  %m = glow.batch_mat_mul %at, %b : (tensor<2x3x4xf32>, tensor<2x4x5xf32>) -> tensor<2x3x5xf32>
  func.return %m : tensor<2x3x5xf32>
}

// -----

// Not folded: the reshape splits the transposed [4, 6] into a batch of [2, 6] instead of
// merging leading dims only.
// CHECK-LABEL:  func.func @reshape_splits_rows
// CHECK-NEXT:     %[[T:.*]] = glow.transpose %b
// CHECK-NEXT:     %[[R:.*]] = glow.reshape %[[T]]
// CHECK-NEXT:     %[[M:.*]] = glow.batch_mat_mul %a, %[[R]] : (tensor<2x3x2xf32>, tensor<2x2x6xf32>) -> tensor<2x3x6xf32>
func.func @reshape_splits_rows(%a: tensor<2x3x2xf32>, %b: tensor<1x6x4xf32>) -> tensor<2x3x6xf32> {
  %bt = glow.transpose %b {shuffle = array<i64: 0, 2, 1>} : tensor<1x6x4xf32> -> tensor<1x4x6xf32>
  %br = glow.reshape %bt : tensor<1x4x6xf32> -> tensor<2x2x6xf32>
  %m = glow.batch_mat_mul %a, %br : (tensor<2x3x2xf32>, tensor<2x2x6xf32>) -> tensor<2x3x6xf32>
  func.return %m : tensor<2x3x6xf32>
}
