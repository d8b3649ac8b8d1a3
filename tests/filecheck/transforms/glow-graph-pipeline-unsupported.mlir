// The graph pipeline ends by checking that the backend runs every op left: one error at
// each op it does not run, after a summary counting them by kind.
// RUN: glow-opt %s --split-input-file -p 'glow-graph-pipeline{backend=accel}' --verify-diagnostics
// RUN: not glow-opt %s --split-input-file -p 'glow-graph-pipeline{backend=accel}' 2>&1 | FileCheck %s
// RUN: not glow-opt %s --split-input-file -p 'glow-graph-pipeline{backend=accel disable=lower-graph}' 2>&1 | FileCheck %s --check-prefix=NOLOWER

// CHECK:      glow-opt: error: backend 'accel' does not support 2 op kind(s): glow.erf (1), glow.sin (2)
// CHECK-NEXT: {{.*}}glow-graph-pipeline-unsupported.mlir:[[# @LINE + 4]]:8: error: 'glow.sin' op is not supported by backend 'accel'
// CHECK-NEXT: {{.*}}glow-graph-pipeline-unsupported.mlir:[[# @LINE + 5]]:8: error: 'glow.sin' op is not supported by backend 'accel'
func.func @f(%x: tensor<4xf16>, %y: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf16>) {
  // expected-error @+1 {{'glow.sin' op is not supported by backend 'accel'}}
  %0 = glow.sin %y : tensor<4xf32>
  // expected-error @+1 {{'glow.sin' op is not supported by backend 'accel'}}
  %1 = glow.sin %0 : tensor<4xf32>
  // f16 has no compute unit: an op kind the accelerator runs on f32 only
  // expected-error @+1 {{'glow.erf' op is not supported by backend 'accel'}}
  %2 = glow.erf %x : tensor<4xf16>
  func.return %1, %2 : tensor<4xf32>, tensor<4xf16>
}

// -----

// With lower-graph disabled, what it would have lowered is left, and the summary says why
// (lower-graph lowers the gelu otherwise: no expected-error).
// NOLOWER:      glow-opt: error: backend 'accel' does not support 1 op kind(s): glow.gelu (1) (lower-graph disabled: backend 'accel' relies on it to lower the ops it does not run)
// NOLOWER-NEXT: {{.*}}glow-graph-pipeline-unsupported.mlir:[[# @LINE + 2]]:8: error: 'glow.gelu' op is not supported by backend 'accel'
func.func @g(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = glow.gelu %x : tensor<4xf32>
  func.return %0 : tensor<4xf32>
}

// -----

// The accelerator runs no control flow: one error at the glow.if and one at the
// glow.loop, none at their terminators (part of them) nor at the relus inside, which it
// runs.
// CHECK:      glow-opt: error: backend 'accel' does not support 2 op kind(s): glow.if (1), glow.loop (1)
// CHECK-NEXT: {{.*}}glow-graph-pipeline-unsupported.mlir:[[# @LINE + 4]]:8: error: 'glow.if' op is not supported by backend 'accel'
// CHECK-NEXT: {{.*}}glow-graph-pipeline-unsupported.mlir:[[# @LINE + 10]]:8: error: 'glow.loop' op is not supported by backend 'accel'
func.func @control_flow(%c: tensor<i1>, %m: tensor<i64>, %x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  // expected-error @+1 {{'glow.if' op is not supported by backend 'accel'}}
  %r = glow.if %c : tensor<i1> -> (tensor<4xf32>) {
    %a = glow.relu %x : tensor<4xf32>
    glow.yield %a : tensor<4xf32>
  } else {
    glow.yield %x : tensor<4xf32>
  }
  // expected-error @+1 {{'glow.loop' op is not supported by backend 'accel'}}
  %l = glow.loop %m, %c, %x : tensor<i64>, tensor<i1>, tensor<4xf32> -> (tensor<4xf32>) {
  ^bb0(%i: tensor<i64>, %v: tensor<4xf32>):
    %n = glow.relu %v : tensor<4xf32>
    glow.yield %c, %n : tensor<i1>, tensor<4xf32>
  }
  func.return %r, %l : tensor<4xf32>, tensor<4xf32>
}
