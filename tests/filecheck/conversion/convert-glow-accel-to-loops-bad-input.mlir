// What convert-glow-accel-to-loops (and so convert-glow-accel-to-llvm) says about programs
// it cannot lower: an error at the function or at each op concerned, exit status 1, no
// traceback.
// RUN: glow-opt %s --split-input-file --convert-glow-accel-to-loops --verify-diagnostics
// RUN: glow-opt %s --split-input-file --convert-glow-accel-to-llvm --verify-diagnostics
// RUN: not glow-opt %s --split-input-file --convert-glow-accel-to-llvm 2>&1 | FileCheck %s
// CHECK-NOT: Traceback

// expected-error @+1 {{'glow_ir.func' op has no memory plan; run plan-memory first}}
glow_ir.func @no_plan declare {
  glow_ir.weight @x constant input : memref<4xf32>
  glow_ir.weight @y mutable output : memref<4xf32>
} program(%x, %y) {
  %t = glow_accel.scratchpad_alloc {offset = 0 : i64} : memref<4xf32, 1>
  %k0 = glow_accel.dma_start %x[0] -> %t[0] sizes [4] : memref<4xf32> -> memref<4xf32, 1>
  glow_accel.dma_wait %k0
  %k1 = glow_accel.dma_start %t[0] -> %y[0] sizes [4] : memref<4xf32, 1> -> memref<4xf32>
  glow_accel.dma_wait %k1
  glow_accel.scratchpad_free %t : memref<4xf32, 1>
} attributes {glow_accel.target = #glow_accel.target<scratchpad_bytes = 256, dma_bytes_per_cycle = 32, dma_latency = 64, macs_per_cycle = 256, vector_width = 16, alignment = 64>}

// -----

// expected-error @+1 {{'glow_ir.func' op has scratchpad tiles but no glow_accel.target}}
glow_ir.func @no_target declare {
  glow_ir.weight @x constant input : memref<4xf32>
  glow_ir.weight @y mutable output : memref<4xf32>
} program(%x, %y) {
  %t = glow_accel.scratchpad_alloc {offset = 0 : i64} : memref<4xf32, 1>
  %k0 = glow_accel.dma_start %x[0] -> %t[0] sizes [4] : memref<4xf32> -> memref<4xf32, 1>
  glow_accel.dma_wait %k0
  %k1 = glow_accel.dma_start %t[0] -> %y[0] sizes [4] : memref<4xf32, 1> -> memref<4xf32>
  glow_accel.dma_wait %k1
  glow_accel.scratchpad_free %t : memref<4xf32, 1>
} attributes {activations_size = 0 : i64, alignment = 64 : i64}

// -----

// A broken scratchpad plan: two tiles of one matmul on the same bytes.
glow_ir.func @overlap declare {
  glow_ir.weight @a constant input : memref<4x4xf32>
  glow_ir.weight @c mutable output : memref<4x4xf32>
} program(%a, %c) {
  %ta = glow_accel.scratchpad_alloc {offset = 0 : i64} : memref<4x4xf32, 1>
  %tb = glow_accel.scratchpad_alloc {offset = 0 : i64} : memref<4x4xf32, 1>
  %tc = glow_accel.scratchpad_alloc {offset = 128 : i64} : memref<4x4xf32, 1>
  %k0 = glow_accel.dma_start %a[0, 0] -> %ta[0, 0] sizes [4, 4] : memref<4x4xf32> -> memref<4x4xf32, 1>
  glow_accel.dma_wait %k0
  // expected-error @+1 {{'glow_accel.matmul' op has tiles %ta and %tb that overlap in the scratchpad; the scratchpad plan is broken (rerun accel-plan-scratchpad)}}
  glow_accel.matmul @out %tc, @in %ta, @in %tb : memref<4x4xf32, 1>, memref<4x4xf32, 1>, memref<4x4xf32, 1>
  %k1 = glow_accel.dma_start %tc[0, 0] -> %c[0, 0] sizes [4, 4] : memref<4x4xf32, 1> -> memref<4x4xf32>
  glow_accel.dma_wait %k1
  glow_accel.scratchpad_free %ta : memref<4x4xf32, 1>
  glow_accel.scratchpad_free %tb : memref<4x4xf32, 1>
  glow_accel.scratchpad_free %tc : memref<4x4xf32, 1>
} attributes {activations_size = 0 : i64, alignment = 64 : i64, glow_accel.target = #glow_accel.target<scratchpad_bytes = 256, dma_bytes_per_cycle = 32, dma_latency = 64, macs_per_cycle = 256, vector_width = 16, alignment = 64>}

// -----

// Ops of another dialect in the program: no code for them (each reported).
// CHECK: {{.*}}.mlir:[[# @LINE + 6]]:8: error: 'arith.constant' op cannot be lowered to loops
// CHECK: {{.*}}.mlir:[[# @LINE + 7]]:8: error: 'arith.constant' op cannot be lowered to loops
glow_ir.func @foreign declare {
  glow_ir.weight @y mutable output : memref<4xf32>
} program(%y) {
  // expected-error @+1 {{'arith.constant' op cannot be lowered to loops (not a glow_ir or glow_accel op of a planned program)}}
  %c = arith.constant 0 : i32
  // expected-error @+1 {{'arith.constant' op cannot be lowered to loops}}
  %d = arith.constant 1 : i32
} attributes {activations_size = 0 : i64, alignment = 64 : i64}
