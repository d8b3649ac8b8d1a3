// REQUIRES: mlir-opt
//
// Our output is real MLIR: upstream mlir-opt-22 (LLVM's own parser, glow being an
// unregistered dialect there) reads glow-opt's output, keeps its dialect_resources blobs,
// and glow-opt reads mlir-opt's output back. Unregistered ops have no custom form upstream,
// so glow ops go through in generic form; the custom form is checked on this file, whose
// ops are upstream ones (func, arith) with !glow.quant types and a dense_resource blob.
//
// Every glow op (the round-trip test's module), generic form:
// RUN: glow-opt %S/../dialects/glow/roundtrip.mlir --print-op-generic | mlir-opt-22 --allow-unregistered-dialect > %t.upstream.mlir
// RUN: FileCheck %s --check-prefix=UPSTREAM < %t.upstream.mlir
// RUN: glow-opt %t.upstream.mlir | FileCheck %s --check-prefix=BACK
// RUN: glow-opt %S/../dialects/glow/roundtrip.mlir --print-op-generic | mlir-opt-22 --allow-unregistered-dialect --mlir-print-op-generic | glow-opt | FileCheck %s --check-prefix=BACK
// With locations:
// RUN: glow-opt %S/../dialects/glow/roundtrip.mlir --print-op-generic --print-debuginfo | mlir-opt-22 --allow-unregistered-dialect --mlir-print-debuginfo | FileCheck %s --check-prefix=LOC
//
// Custom form of upstream ops, and back:
// RUN: glow-opt %s | mlir-opt-22 --allow-unregistered-dialect | FileCheck %s --check-prefix=CUSTOM
// RUN: glow-opt %s | mlir-opt-22 --allow-unregistered-dialect | glow-opt | FileCheck %s --check-prefix=CUSTOM-BACK

// UPSTREAM-LABEL: func.func @data(
// UPSTREAM:         "glow.constant"() {value = dense_resource<fc_weights> : tensor<4x3xf32>} : () -> tensor<4x3xf32>
// UPSTREAM:         "glow.concat"(%arg0, %arg1, %arg0) {dim = 1 : i64} : (tensor<2x3x4xf32>, tensor<2x5x4xf32>, tensor<2x3x4xf32>) -> tensor<2x11x4xf32>
// UPSTREAM-LABEL: func.func @reductions(
// UPSTREAM:         %{{.*}}:2 = "glow.top_k"(%arg0) {k = 5 : i64} : (tensor<8x16x32xf32>) -> (tensor<8x16x5xf32>, tensor<8x16x5xi64>)
// UPSTREAM-LABEL: func.func @quantized(
// UPSTREAM-SAME:    tensor<8x3x3x3x!glow.quant<i8, scale = 0.02, offset = 0>>
// UPSTREAM:         "glow.constant"() {value = dense_resource<q_weights> : tensor<2x4x!glow.quant<i8, scale = 1.0e-05, offset = 0>>}
// UPSTREAM:       dialect_resources: {
// UPSTREAM-NEXT:    builtin: {
// UPSTREAM-NEXT:      fc_weights: "0x040000000000C0BF0000A0BF000080BF000040BF000000BF000080BE000000000000803E0000003F0000403F0000803F0000A03F",
// UPSTREAM-NEXT:      q_weights: "0x0100000080FF00010203407F"

// BACK-LABEL: func.func @data(
// BACK:         glow.constant dense_resource<fc_weights> : tensor<4x3xf32>
// BACK:         glow.concat %{{.*}}, %{{.*}}, %{{.*}} {dim = 1 : i64} : (tensor<2x3x4xf32>, tensor<2x5x4xf32>, tensor<2x3x4xf32>) -> tensor<2x11x4xf32>
// BACK-LABEL: func.func @reductions(
// BACK:         %{{.*}}, %{{.*}} = glow.top_k %{{.*}} {k = 5 : i64} : (tensor<8x16x32xf32>) -> (tensor<8x16x5xf32>, tensor<8x16x5xi64>)
// BACK-LABEL: func.func @quantized(
// BACK:         glow.constant dense_resource<q_weights> : tensor<2x4x!glow.quant<i8, scale = 1.0e-05, offset = 0>>
// BACK-DAG:     fc_weights: "0x040000000000c0bf0000a0bf000080bf000040bf000000bf000080be000000000000803e0000003f0000403f0000803f0000a03f"
// BACK-DAG:     q_weights: "0x0100000080ff00010203407f"

// LOC: "glow.constant"() {value = dense_resource<fc_weights> : tensor<4x3xf32>} : () -> tensor<4x3xf32> loc([[L:#loc[0-9]*]])
// LOC: [[L]] = loc("{{.*}}roundtrip.mlir":{{[0-9]+}}:8)

// CUSTOM-LABEL: func.func @upstream(%arg0: tensor<4x!glow.quant<i8, scale = 0.5, offset = -3>>, %arg1: tensor<2xf32>)
// CUSTOM-NEXT:    %{{.*}} = arith.constant dense_resource<bias> : tensor<2xf32>
// CUSTOM:         bias: "0x040000000000803F00000040"
// CUSTOM-BACK-LABEL: func.func @upstream(
// CUSTOM-BACK-NEXT:    arith.constant dense_resource<bias> : tensor<2xf32>
// CUSTOM-BACK:         bias: "0x040000000000803f00000040"

func.func @upstream(%q: tensor<4x!glow.quant<i8, scale = 0.5, offset = -3>>, %x: tensor<2xf32>) -> (tensor<4x!glow.quant<i8, scale = 0.5, offset = -3>>, tensor<2xf32>) {
  %c = arith.constant dense_resource<bias> : tensor<2xf32>
  %s = arith.addf %x, %c : tensor<2xf32>
  %r:2 = func.call @upstream(%q, %s) : (tensor<4x!glow.quant<i8, scale = 0.5, offset = -3>>, tensor<2xf32>) -> (tensor<4x!glow.quant<i8, scale = 0.5, offset = -3>>, tensor<2xf32>)
  func.return %r#0, %r#1 : tensor<4x!glow.quant<i8, scale = 0.5, offset = -3>>, tensor<2xf32>
}

{-#
  dialect_resources: {
    builtin: {
      bias: "0x040000000000803F00000040"
    }
  }
#-}
