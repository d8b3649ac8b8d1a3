// --verify-diagnostics has MLIR's semantics: every error must be expected by an
// expected-error annotation for its line (@+N, @-N, @above, @below, or none: this line)
// whose text it contains, and every annotation must be met. This file
// passes; inputs/vd-wrong.mlir holds wrong expectations, each of which must be reported
// and make glow-opt exit 1 (its own CHECK lines say how).
//
// RUN: glow-opt %s --split-input-file --verify-diagnostics
// RUN: not glow-opt %S/inputs/vd-wrong.mlir --split-input-file --verify-diagnostics 2>&1 | FileCheck %S/inputs/vd-wrong.mlir
// RUN: not glow-opt %S/inputs/bad-annotation.mlir --verify-diagnostics 2>&1 | FileCheck %s --check-prefix=BAD-LOC
// BAD-LOC: glow-opt: error: {{.*}}bad-annotation.mlir:2: invalid expected-error location '@next' (use @+N, @-N, @above or @below)
//
// A file without any annotation is checked the xdsl-opt way: diagnostics go to stdout,
// the exit status is 0.
// RUN: glow-opt %S/inputs/vd-unannotated.mlir --split-input-file --verify-diagnostics | FileCheck %S/inputs/vd-unannotated.mlir

func.func @same_line(%x: tensor<4xi32>) {
  %0 = glow.sigmoid %x : tensor<4xi32> // expected-error {{'glow.sigmoid' op operand must have floating-point elements, got i32}}
  func.return
}

// -----

func.func @no_space(%x: tensor<4xi32>) {
  // expected-error@+1 {{'glow.sigmoid' op operand must have floating-point elements}}
  %0 = glow.sigmoid %x : tensor<4xi32>
  func.return
}

// -----

func.func @below(%x: tensor<4xi32>) {
  // expected-error @below {{floating-point}}
  %0 = glow.sigmoid %x : tensor<4xi32>
  func.return
}

// -----

func.func @above(%x: tensor<4xi32>) {
  %0 = glow.sigmoid %x : tensor<4xi32>
  // expected-error @above {{floating-point}}
  func.return
}

// -----

func.func @minus(%x: tensor<4xi32>) {
  %0 = glow.sigmoid %x : tensor<4xi32>

  // expected-error @-2 {{floating-point}}
  func.return
}

// -----

// The second op fails; the first is fine.
func.func @plus_two(%x: tensor<4xf32>) {
  // expected-error @+2 {{'glow.not' op operand must have i1 or integer elements, got f32}}
  %0 = glow.relu %x : tensor<4xf32>
  %1 = glow.not %0 : tensor<4xf32>
  func.return
}

// -----

// Parse errors are matched the same way.
func.func @parse_error(%x: tensor<4xf32>) {
  // expected-error @+1 {{unknown op 'glow.frob'}}
  %0 = glow.frob %x : tensor<4xf32>
  func.return
}

// -----

// A chunk without annotation that succeeds is fine.
func.func @fine(%x: tensor<4xf32>) {
  %0 = glow.relu %x : tensor<4xf32>
  func.return
}
