// RUN: not glow-opt %s --split-input-file --accel-plan-scratchpad | FileCheck %s
// RUN: not glow-opt %s --split-input-file --accel-plan-scratchpad --accel-plan-scratchpad \
// RUN:   | FileCheck %s
// The programs it cannot plan: an error at the op concerned.
// RUN: glow-opt %s --split-input-file --accel-plan-scratchpad --verify-diagnostics

// Offsets are multiples of the alignment (a 24-byte tile takes 64 bytes). Tiles a compute
// op writes (%t1, %t3, %t4) stack down from the top, the tile only read (%t2) sits at the
// bottom; %t3 takes the bytes %t1 left, %t4 the highest ones free below it. The peak is
// the top of the plan; planning twice gives the same.
// CHECK-LABEL:  glow_ir.func @reuse
// CHECK:          %t1 = glow_accel.scratchpad_alloc {offset = [[T1:128]] : i64} : memref<4x8xf32
// CHECK-NEXT:     %t2 = glow_accel.scratchpad_alloc {offset = 0 : i64} : memref<2x3xf32
// CHECK:          %t3 = glow_accel.scratchpad_alloc {offset = [[T1]] : i64} : memref<4x8xf32
// CHECK:          %t4 = glow_accel.scratchpad_alloc {offset = 64 : i64} : memref<2x3xf32
// CHECK:          glow_accel.scratchpad_peak = 256 : i64
glow_ir.func @reuse declare {
  glow_ir.weight @x mutable input : memref<8x8xf32>
} program(%x) {
  %t1 = glow_accel.scratchpad_alloc : memref<4x8xf32, 1>
  %t2 = glow_accel.scratchpad_alloc : memref<2x3xf32, 1>
  %k1 = glow_accel.dma_start %x[0, 0] -> %t1[0, 0] sizes [4, 8] : memref<8x8xf32> -> memref<4x8xf32, 1>
  %k2 = glow_accel.dma_start %x[4, 0] -> %t2[0, 0] sizes [2, 3] : memref<8x8xf32> -> memref<2x3xf32, 1>
  glow_accel.dma_wait %k1, %k2
  glow_accel.elementwise @out %t1, @in %t1 {kind = "relu"} : memref<4x8xf32, 1>
  glow_accel.scratchpad_free %t1 : memref<4x8xf32, 1>
  %t3 = glow_accel.scratchpad_alloc : memref<4x8xf32, 1>
  %t4 = glow_accel.scratchpad_alloc : memref<2x3xf32, 1>
  glow_accel.elementwise @out %t3, @in %t3 {kind = "relu"} : memref<4x8xf32, 1>
  glow_accel.elementwise @out %t4, @in %t2 {kind = "relu"} : memref<2x3xf32, 1>
  glow_accel.scratchpad_free %t4 : memref<2x3xf32, 1>
  glow_accel.scratchpad_free %t3 : memref<4x8xf32, 1>
  glow_accel.scratchpad_free %t2 : memref<2x3xf32, 1>
} attributes {glow_accel.target = #glow_accel.target<scratchpad_bytes = 256, dma_bytes_per_cycle = 32, dma_latency = 64, macs_per_cycle = 256, vector_width = 16, alignment = 64>}

// -----

// Offsets already there (here overlapping) are replaced by a new plan. %a (written)
// stacks down from the top of the 4096 bytes, %b (read) up from 0; then %a moves down
// to just above %b, so the peak is what the plan needs, not the capacity.
// CHECK-LABEL:  glow_ir.func @replan
// CHECK:          %a = glow_accel.scratchpad_alloc {offset = 128 : i64}
// CHECK-NEXT:     %b = glow_accel.scratchpad_alloc {offset = 0 : i64}
// CHECK:          glow_accel.scratchpad_peak = 256 : i64
glow_ir.func @replan declare {
  glow_ir.weight @x mutable input : memref<8x8xf32>
} program(%x) {
  %a = glow_accel.scratchpad_alloc {offset = 0 : i64} : memref<4x8xf32, 1>
  %b = glow_accel.scratchpad_alloc {offset = 0 : i64} : memref<4x8xf32, 1>
  glow_accel.elementwise @out %a, @in %b {kind = "copy"} : memref<4x8xf32, 1>
  glow_accel.scratchpad_free %a : memref<4x8xf32, 1>
  glow_accel.scratchpad_free %b : memref<4x8xf32, 1>
} attributes {glow_accel.scratchpad_peak = 128 : i64, glow_accel.target = #glow_accel.target<scratchpad_bytes = 4096, dma_bytes_per_cycle = 32, dma_latency = 64, macs_per_cycle = 256, vector_width = 16, alignment = 64>}

// -----

// Three 128-byte tiles and a 64-byte one live at the matmul do not fit 256 bytes: the error
// is at the op, with the overflow and the largest tile live there.
glow_ir.func @too_big declare {
  glow_ir.weight @x mutable input : memref<8x8xf32>
} program(%x) {
  %a = glow_accel.scratchpad_alloc : memref<4x4xf32, 1>
  %b = glow_accel.scratchpad_alloc : memref<4x8xf32, 1>
  %c = glow_accel.scratchpad_alloc : memref<4x8xf32, 1>
  %d = glow_accel.scratchpad_alloc : memref<4x8xf32, 1>
  // expected-error @+1 {{'glow_accel.matmul' op live tiles need 448 bytes, 192 over the 256-byte scratchpad; largest live tile %b : memref<4x8xf32, 1 : i64>}}
  glow_accel.matmul @out %c, @in %a, @in %b : memref<4x8xf32, 1>, memref<4x4xf32, 1>, memref<4x8xf32, 1>
  glow_accel.scratchpad_free %a : memref<4x4xf32, 1>
  glow_accel.scratchpad_free %b : memref<4x8xf32, 1>
  glow_accel.scratchpad_free %c : memref<4x8xf32, 1>
  glow_accel.scratchpad_free %d : memref<4x8xf32, 1>
} attributes {glow_accel.target = #glow_accel.target<scratchpad_bytes = 256, dma_bytes_per_cycle = 32, dma_latency = 64, macs_per_cycle = 256, vector_width = 16, alignment = 64>}

// -----

// A transfer waited for after its tile's free could write freed bytes: an error.
glow_ir.func @wait_after_free declare {
  glow_ir.weight @x mutable input : memref<8x8xf32>
} program(%x) {
  %a = glow_accel.scratchpad_alloc : memref<4x8xf32, 1>
  %k = glow_accel.dma_start %x[0, 0] -> %a[0, 0] sizes [4, 8] : memref<8x8xf32> -> memref<4x8xf32, 1>
  glow_accel.scratchpad_free %a : memref<4x8xf32, 1>
  // expected-error @+1 {{'glow_accel.dma_wait' op waits for a DMA on tile %a : memref<4x8xf32, 1 : i64> after the tile's scratchpad_free}}
  glow_accel.dma_wait %k
} attributes {glow_accel.target = #glow_accel.target<scratchpad_bytes = 256, dma_bytes_per_cycle = 32, dma_latency = 64, macs_per_cycle = 256, vector_width = 16, alignment = 64>}

// -----

// A tile freed twice has no single life to plan.
glow_ir.func @freed_twice declare {
} program() {
  %a = glow_accel.scratchpad_alloc : memref<4xf32, 1>
  glow_accel.shuffle @out %a {kind = "splat", value = 0.000000e+00 : f32} : memref<4xf32, 1>
  glow_accel.scratchpad_free %a : memref<4xf32, 1>
  // expected-error @+1 {{'glow_accel.scratchpad_free' op frees tile %a : memref<4xf32, 1 : i64>, which is freed 2 times}}
  glow_accel.scratchpad_free %a : memref<4xf32, 1>
} attributes {glow_accel.target = #glow_accel.target<scratchpad_bytes = 256, dma_bytes_per_cycle = 32, dma_latency = 64, macs_per_cycle = 256, vector_width = 16, alignment = 64>}

// -----

// A use after the free would touch bytes another tile may own by then.
glow_ir.func @use_after_free declare {
} program() {
  %a = glow_accel.scratchpad_alloc : memref<4xf32, 1>
  glow_accel.shuffle @out %a {kind = "splat", value = 0.000000e+00 : f32} : memref<4xf32, 1>
  glow_accel.scratchpad_free %a : memref<4xf32, 1>
  // expected-error @+1 {{'glow_accel.shuffle' op uses tile %a : memref<4xf32, 1 : i64> outside its life (from its scratchpad_alloc to its scratchpad_free)}}
  glow_accel.shuffle @out %a {kind = "splat", value = 1.000000e+00 : f32} : memref<4xf32, 1>
} attributes {glow_accel.target = #glow_accel.target<scratchpad_bytes = 256, dma_bytes_per_cycle = 32, dma_latency = 64, macs_per_cycle = 256, vector_width = 16, alignment = 64>}
