// What convert-glow-accel-to-loops (and so convert-glow-accel-to-llvm) says about programs
// it cannot lower: exit status 1, one line naming the pass, where and what, no traceback.
// RUN: not glow-opt %s --split-input-file --convert-glow-accel-to-loops 2>&1 | FileCheck %s
// RUN: not glow-opt %s --split-input-file --convert-glow-accel-to-llvm 2>&1 | FileCheck %s --check-prefix=LLVM
// CHECK-NOT: Traceback
// LLVM-NOT: Traceback

// CHECK: convert-glow-accel-to-loops: @no_plan at {{.*}}.mlir:{{[0-9]+}}:{{[0-9]+}} has no memory plan; run plan-memory first
// LLVM: convert-glow-accel-to-llvm: @no_plan at {{.*}}.mlir:{{[0-9]+}}:{{[0-9]+}} has no memory plan; run plan-memory first
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

// CHECK: convert-glow-accel-to-loops: @no_target at {{.*}}.mlir:{{[0-9]+}}:{{[0-9]+}} has scratchpad tiles but no glow_accel.target
// LLVM: convert-glow-accel-to-llvm: @no_target at {{.*}}.mlir:{{[0-9]+}}:{{[0-9]+}} has scratchpad tiles but no glow_accel.target
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
// CHECK: convert-glow-accel-to-loops: glow_accel.matmul: its tiles %ta and %tb overlap in the scratchpad (at {{.*}}convert-glow-accel-to-loops-bad-input.mlir:[[# @LINE + 11]]:3); the scratchpad plan is broken (rerun accel-plan-scratchpad)
// LLVM: convert-glow-accel-to-llvm: glow_accel.matmul: its tiles %ta and %tb overlap in the scratchpad
glow_ir.func @overlap declare {
  glow_ir.weight @a constant input : memref<4x4xf32>
  glow_ir.weight @c mutable output : memref<4x4xf32>
} program(%a, %c) {
  %ta = glow_accel.scratchpad_alloc {offset = 0 : i64} : memref<4x4xf32, 1>
  %tb = glow_accel.scratchpad_alloc {offset = 0 : i64} : memref<4x4xf32, 1>
  %tc = glow_accel.scratchpad_alloc {offset = 128 : i64} : memref<4x4xf32, 1>
  %k0 = glow_accel.dma_start %a[0, 0] -> %ta[0, 0] sizes [4, 4] : memref<4x4xf32> -> memref<4x4xf32, 1>
  glow_accel.dma_wait %k0
  glow_accel.matmul @out %tc, @in %ta, @in %tb : memref<4x4xf32, 1>, memref<4x4xf32, 1>, memref<4x4xf32, 1>
  %k1 = glow_accel.dma_start %tc[0, 0] -> %c[0, 0] sizes [4, 4] : memref<4x4xf32, 1> -> memref<4x4xf32>
  glow_accel.dma_wait %k1
  glow_accel.scratchpad_free %ta : memref<4x4xf32, 1>
  glow_accel.scratchpad_free %tb : memref<4x4xf32, 1>
  glow_accel.scratchpad_free %tc : memref<4x4xf32, 1>
} attributes {activations_size = 0 : i64, alignment = 64 : i64, glow_accel.target = #glow_accel.target<scratchpad_bytes = 256, dma_bytes_per_cycle = 32, dma_latency = 64, macs_per_cycle = 256, vector_width = 16, alignment = 64>}

// -----

// An op of another dialect in the program: no code for it.
// CHECK: convert-glow-accel-to-loops: @foreign: cannot lower arith.constant at {{.*}}.mlir:{{[0-9]+}}:{{[0-9]+}}
// LLVM: convert-glow-accel-to-llvm: @foreign: cannot lower arith.constant
glow_ir.func @foreign declare {
  glow_ir.weight @y mutable output : memref<4xf32>
} program(%y) {
  %c = arith.constant 0 : i32
} attributes {activations_size = 0 : i64, alignment = 64 : i64}
