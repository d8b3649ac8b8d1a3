// Wrong expectations for verify-diagnostics.mlir: every chunk but the last must be
// reported, and glow-opt must exit 1. Checked with this file as the check file.

// The message is not the one produced:
func.func @wrong_text(%x: tensor<4xi32>) {
  // CHECK: vd-wrong.mlir:[[# @LINE + 3]]: error: unexpected error: 'glow.sigmoid' op operand must have floating-point elements, got i32
  // CHECK: vd-wrong.mlir:[[# @LINE + 2]]: error: expected error "must have integer elements" was not produced
  // expected-error @+1 {{must have integer elements}}
  %0 = glow.sigmoid %x : tensor<4xi32>
  func.return
}

// -----

// The error is produced one line above the annotated one:
func.func @wrong_line(%x: tensor<4xi32>) {
  // CHECK: vd-wrong.mlir:[[# @LINE + 3]]: error: unexpected error: 'glow.sigmoid' op operand
  // CHECK: vd-wrong.mlir:[[# @LINE + 3]]: error: expected error "operand must have floating-point elements" was not produced
  // expected-error @+2 {{operand must have floating-point elements}}
  %0 = glow.sigmoid %x : tensor<4xi32>
  func.return
}

// -----

// No error at all:
func.func @no_error(%x: tensor<4xf32>) {
  // CHECK: vd-wrong.mlir:[[# @LINE + 2]]: error: expected error "operand must have floating-point elements" was not produced
  // expected-error @+1 {{operand must have floating-point elements}}
  %0 = glow.sigmoid %x : tensor<4xf32>
  func.return
}

// -----

// An error nobody expected:
func.func @unexpected(%x: tensor<4xf32>) {
  // CHECK: vd-wrong.mlir:[[# @LINE + 1]]: error: unexpected error: 'glow.not' op operand must have i1 or integer elements, got f32
  %0 = glow.not %x : tensor<4xf32>
  func.return
}

// -----

// A parse error at another line than expected:
func.func @parse_error_elsewhere(%x: tensor<4xf32>) {
  // CHECK: vd-wrong.mlir:[[# @LINE + 4]]: error: unexpected error: unknown op 'glow.frob'
  // CHECK: vd-wrong.mlir:[[# @LINE + 2]]: error: expected error "unknown op" was not produced
  // expected-error @+1 {{unknown op}}
  %0 = glow.relu %x : tensor<4xf32>
  %1 = glow.frob %0 : tensor<4xf32>
  func.return
}

// -----

// Warnings, remarks and notes are expectations too; glow-opt produces none of them.
func.func @warning(%x: tensor<4xf32>) {
  // CHECK: vd-wrong.mlir:[[# @LINE + 2]]: error: expected warning "slow" was not produced
  // expected-warning @+1 {{slow}}
  %0 = glow.relu %x : tensor<4xf32>
  func.return
}

// -----

// A right expectation: not reported.
func.func @right(%x: tensor<4xi32>) {
  // expected-error @+1 {{'glow.sigmoid' op operand must have floating-point elements, got i32}}
  %0 = glow.sigmoid %x : tensor<4xi32>
  func.return
}

// CHECK-NOT: error
