// RUN: glow-opt %s --split-input-file --accel-double-buffer | FileCheck %s

// Inputs are accel-insert-dma's output for blocking element-wise and matmul steps.

// Two independent steps with room for both: step 1's allocs and loads move above step
// 0's compute (before step 0's waits, so the engine never idles), and step 0's store is
// waited for (and its tile freed) only after step 1's compute.
// CHECK-LABEL:  glow_ir.func @overlap
// CHECK:          %c0 = glow_accel.scratchpad_alloc
// CHECK-NEXT:     %a1 = glow_accel.scratchpad_alloc
// CHECK-NEXT:     %ka1 = glow_accel.dma_start %x[4, 0] -> %a1[0, 0]
// CHECK-NEXT:     %b1 = glow_accel.scratchpad_alloc
// CHECK-NEXT:     %kb1 = glow_accel.dma_start %y[4, 0] -> %b1[0, 0]
// CHECK-NEXT:     glow_accel.dma_wait %ka0
// CHECK-NEXT:     glow_accel.dma_wait %kb0
// CHECK-NEXT:     glow_accel.elementwise @out %c0, @in %a0, @in %b0
// CHECK-NEXT:     glow_accel.scratchpad_free %a0
// CHECK-NEXT:     glow_accel.scratchpad_free %b0
// CHECK-NEXT:     %s0 = glow_accel.dma_start %c0[0, 0] -> %z[0, 0]
// CHECK-NEXT:     %c1 = glow_accel.scratchpad_alloc
// CHECK-NEXT:     glow_accel.dma_wait %ka1
// CHECK-NEXT:     glow_accel.dma_wait %kb1
// CHECK-NEXT:     glow_accel.elementwise @out %c1, @in %a1, @in %b1
// CHECK-NEXT:     glow_accel.dma_wait %s0
// CHECK-NEXT:     glow_accel.scratchpad_free %c0
// CHECK-NEXT:     glow_accel.scratchpad_free %a1
// CHECK-NEXT:     glow_accel.scratchpad_free %b1
// CHECK-NEXT:     %s1 = glow_accel.dma_start %c1[0, 0] -> %z[4, 0]
// CHECK-NEXT:     glow_accel.dma_wait %s1
// CHECK-NEXT:     glow_accel.scratchpad_free %c1
// CHECK-NEXT:   }
glow_ir.func @overlap declare {
  glow_ir.weight @x mutable input : memref<8x8xf32>
  glow_ir.weight @y mutable input : memref<8x8xf32>
  glow_ir.weight @z mutable output : memref<8x8xf32>
} program(%x, %y, %z) {
  %a0 = glow_accel.scratchpad_alloc : memref<4x8xf32, 1>
  %ka0 = glow_accel.dma_start %x[0, 0] -> %a0[0, 0] sizes [4, 8] : memref<8x8xf32> -> memref<4x8xf32, 1>
  %b0 = glow_accel.scratchpad_alloc : memref<4x8xf32, 1>
  %kb0 = glow_accel.dma_start %y[0, 0] -> %b0[0, 0] sizes [4, 8] : memref<8x8xf32> -> memref<4x8xf32, 1>
  %c0 = glow_accel.scratchpad_alloc : memref<4x8xf32, 1>
  glow_accel.dma_wait %ka0
  glow_accel.dma_wait %kb0
  glow_accel.elementwise @out %c0, @in %a0, @in %b0 {kind = "element_add"} : memref<4x8xf32, 1>
  glow_accel.scratchpad_free %a0 : memref<4x8xf32, 1>
  glow_accel.scratchpad_free %b0 : memref<4x8xf32, 1>
  %s0 = glow_accel.dma_start %c0[0, 0] -> %z[0, 0] sizes [4, 8] : memref<4x8xf32, 1> -> memref<8x8xf32>
  glow_accel.dma_wait %s0
  glow_accel.scratchpad_free %c0 : memref<4x8xf32, 1>
  %a1 = glow_accel.scratchpad_alloc : memref<4x8xf32, 1>
  %ka1 = glow_accel.dma_start %x[4, 0] -> %a1[0, 0] sizes [4, 8] : memref<8x8xf32> -> memref<4x8xf32, 1>
  %b1 = glow_accel.scratchpad_alloc : memref<4x8xf32, 1>
  %kb1 = glow_accel.dma_start %y[4, 0] -> %b1[0, 0] sizes [4, 8] : memref<8x8xf32> -> memref<4x8xf32, 1>
  %c1 = glow_accel.scratchpad_alloc : memref<4x8xf32, 1>
  glow_accel.dma_wait %ka1
  glow_accel.dma_wait %kb1
  glow_accel.elementwise @out %c1, @in %a1, @in %b1 {kind = "element_add"} : memref<4x8xf32, 1>
  glow_accel.scratchpad_free %a1 : memref<4x8xf32, 1>
  glow_accel.scratchpad_free %b1 : memref<4x8xf32, 1>
  %s1 = glow_accel.dma_start %c1[0, 0] -> %z[4, 0] sizes [4, 8] : memref<4x8xf32, 1> -> memref<8x8xf32>
  glow_accel.dma_wait %s1
  glow_accel.scratchpad_free %c1 : memref<4x8xf32, 1>
} attributes {glow_accel.target = #glow_accel.target<scratchpad_bytes = 4096, dma_bytes_per_cycle = 32, dma_latency = 64, macs_per_cycle = 256, vector_width = 16, alignment = 64>}

// -----

// The same steps, but the scratchpad holds only one step's three tiles: nothing moves.
// CHECK-LABEL:  glow_ir.func @too_small
// CHECK:          glow_accel.elementwise @out %c0, @in %a0, @in %b0
// CHECK-NEXT:     glow_accel.scratchpad_free %a0
// CHECK-NEXT:     glow_accel.scratchpad_free %b0
// CHECK-NEXT:     %s0 = glow_accel.dma_start %c0[0, 0] -> %z[0, 0]
// CHECK-NEXT:     glow_accel.dma_wait %s0
// CHECK-NEXT:     glow_accel.scratchpad_free %c0
// CHECK-NEXT:     %a1 = glow_accel.scratchpad_alloc
// CHECK-NEXT:     %ka1 = glow_accel.dma_start %x[4, 0] -> %a1[0, 0]
// CHECK-NEXT:     %b1 = glow_accel.scratchpad_alloc
// CHECK-NEXT:     %kb1 = glow_accel.dma_start %y[4, 0] -> %b1[0, 0]
// CHECK-NEXT:     %c1 = glow_accel.scratchpad_alloc
// CHECK-NEXT:     glow_accel.dma_wait %ka1
// CHECK-NEXT:     glow_accel.dma_wait %kb1
// CHECK-NEXT:     glow_accel.elementwise @out %c1, @in %a1, @in %b1
// CHECK-NEXT:     glow_accel.scratchpad_free %a1
// CHECK-NEXT:     glow_accel.scratchpad_free %b1
// CHECK-NEXT:     %s1 = glow_accel.dma_start
glow_ir.func @too_small declare {
  glow_ir.weight @x mutable input : memref<8x8xf32>
  glow_ir.weight @y mutable input : memref<8x8xf32>
  glow_ir.weight @z mutable output : memref<8x8xf32>
} program(%x, %y, %z) {
  %a0 = glow_accel.scratchpad_alloc : memref<4x8xf32, 1>
  %ka0 = glow_accel.dma_start %x[0, 0] -> %a0[0, 0] sizes [4, 8] : memref<8x8xf32> -> memref<4x8xf32, 1>
  %b0 = glow_accel.scratchpad_alloc : memref<4x8xf32, 1>
  %kb0 = glow_accel.dma_start %y[0, 0] -> %b0[0, 0] sizes [4, 8] : memref<8x8xf32> -> memref<4x8xf32, 1>
  %c0 = glow_accel.scratchpad_alloc : memref<4x8xf32, 1>
  glow_accel.dma_wait %ka0
  glow_accel.dma_wait %kb0
  glow_accel.elementwise @out %c0, @in %a0, @in %b0 {kind = "element_add"} : memref<4x8xf32, 1>
  glow_accel.scratchpad_free %a0 : memref<4x8xf32, 1>
  glow_accel.scratchpad_free %b0 : memref<4x8xf32, 1>
  %s0 = glow_accel.dma_start %c0[0, 0] -> %z[0, 0] sizes [4, 8] : memref<4x8xf32, 1> -> memref<8x8xf32>
  glow_accel.dma_wait %s0
  glow_accel.scratchpad_free %c0 : memref<4x8xf32, 1>
  %a1 = glow_accel.scratchpad_alloc : memref<4x8xf32, 1>
  %ka1 = glow_accel.dma_start %x[4, 0] -> %a1[0, 0] sizes [4, 8] : memref<8x8xf32> -> memref<4x8xf32, 1>
  %b1 = glow_accel.scratchpad_alloc : memref<4x8xf32, 1>
  %kb1 = glow_accel.dma_start %y[4, 0] -> %b1[0, 0] sizes [4, 8] : memref<8x8xf32> -> memref<4x8xf32, 1>
  %c1 = glow_accel.scratchpad_alloc : memref<4x8xf32, 1>
  glow_accel.dma_wait %ka1
  glow_accel.dma_wait %kb1
  glow_accel.elementwise @out %c1, @in %a1, @in %b1 {kind = "element_add"} : memref<4x8xf32, 1>
  glow_accel.scratchpad_free %a1 : memref<4x8xf32, 1>
  glow_accel.scratchpad_free %b1 : memref<4x8xf32, 1>
  %s1 = glow_accel.dma_start %c1[0, 0] -> %z[4, 0] sizes [4, 8] : memref<4x8xf32, 1> -> memref<8x8xf32>
  glow_accel.dma_wait %s1
  glow_accel.scratchpad_free %c1 : memref<4x8xf32, 1>
} attributes {glow_accel.target = #glow_accel.target<scratchpad_bytes = 384, dma_bytes_per_cycle = 32, dma_latency = 64, macs_per_cycle = 256, vector_width = 16, alignment = 64>}

// -----

// Step 1 reads the rows of %z step 0 stores: that load stays after the store's wait,
// which stays before it; step 1's other load is still prefetched.
// CHECK-LABEL:  glow_ir.func @dependence
// CHECK:          %c0 = glow_accel.scratchpad_alloc
// CHECK-NEXT:     %a1 = glow_accel.scratchpad_alloc
// CHECK-NEXT:     %ka1 = glow_accel.dma_start %x[4, 0] -> %a1[0, 0]
// CHECK-NEXT:     glow_accel.dma_wait %ka0
// CHECK-NEXT:     glow_accel.dma_wait %kb0
// CHECK-NEXT:     glow_accel.elementwise @out %c0, @in %a0, @in %b0
// CHECK-NEXT:     glow_accel.scratchpad_free %a0
// CHECK-NEXT:     glow_accel.scratchpad_free %b0
// CHECK-NEXT:     %s0 = glow_accel.dma_start %c0[0, 0] -> %z[0, 0]
// CHECK-NEXT:     glow_accel.dma_wait %s0
// CHECK-NEXT:     glow_accel.scratchpad_free %c0
// CHECK-NEXT:     %b1 = glow_accel.scratchpad_alloc
// CHECK-NEXT:     %kb1 = glow_accel.dma_start %z[0, 0] -> %b1[0, 0]
// CHECK-NEXT:     %c1 = glow_accel.scratchpad_alloc
// CHECK-NEXT:     glow_accel.dma_wait %ka1
// CHECK-NEXT:     glow_accel.dma_wait %kb1
// CHECK-NEXT:     glow_accel.elementwise @out %c1, @in %a1, @in %b1
glow_ir.func @dependence declare {
  glow_ir.weight @x mutable input : memref<8x8xf32>
  glow_ir.weight @y mutable input : memref<8x8xf32>
  glow_ir.weight @z mutable output : memref<8x8xf32>
} program(%x, %y, %z) {
  %a0 = glow_accel.scratchpad_alloc : memref<4x8xf32, 1>
  %ka0 = glow_accel.dma_start %x[0, 0] -> %a0[0, 0] sizes [4, 8] : memref<8x8xf32> -> memref<4x8xf32, 1>
  %b0 = glow_accel.scratchpad_alloc : memref<4x8xf32, 1>
  %kb0 = glow_accel.dma_start %y[0, 0] -> %b0[0, 0] sizes [4, 8] : memref<8x8xf32> -> memref<4x8xf32, 1>
  %c0 = glow_accel.scratchpad_alloc : memref<4x8xf32, 1>
  glow_accel.dma_wait %ka0
  glow_accel.dma_wait %kb0
  glow_accel.elementwise @out %c0, @in %a0, @in %b0 {kind = "element_add"} : memref<4x8xf32, 1>
  glow_accel.scratchpad_free %a0 : memref<4x8xf32, 1>
  glow_accel.scratchpad_free %b0 : memref<4x8xf32, 1>
  %s0 = glow_accel.dma_start %c0[0, 0] -> %z[0, 0] sizes [4, 8] : memref<4x8xf32, 1> -> memref<8x8xf32>
  glow_accel.dma_wait %s0
  glow_accel.scratchpad_free %c0 : memref<4x8xf32, 1>
  %a1 = glow_accel.scratchpad_alloc : memref<4x8xf32, 1>
  %ka1 = glow_accel.dma_start %x[4, 0] -> %a1[0, 0] sizes [4, 8] : memref<8x8xf32> -> memref<4x8xf32, 1>
  %b1 = glow_accel.scratchpad_alloc : memref<4x8xf32, 1>
  %kb1 = glow_accel.dma_start %z[0, 0] -> %b1[0, 0] sizes [4, 8] : memref<8x8xf32> -> memref<4x8xf32, 1>
  %c1 = glow_accel.scratchpad_alloc : memref<4x8xf32, 1>
  glow_accel.dma_wait %ka1
  glow_accel.dma_wait %kb1
  glow_accel.elementwise @out %c1, @in %a1, @in %b1 {kind = "element_add"} : memref<4x8xf32, 1>
  glow_accel.scratchpad_free %a1 : memref<4x8xf32, 1>
  glow_accel.scratchpad_free %b1 : memref<4x8xf32, 1>
  %s1 = glow_accel.dma_start %c1[0, 0] -> %z[4, 0] sizes [4, 8] : memref<4x8xf32, 1> -> memref<8x8xf32>
  glow_accel.dma_wait %s1
  glow_accel.scratchpad_free %c1 : memref<4x8xf32, 1>
} attributes {glow_accel.target = #glow_accel.target<scratchpad_bytes = 4096, dma_bytes_per_cycle = 32, dma_latency = 64, macs_per_cycle = 256, vector_width = 16, alignment = 64>}

// -----

// A matmul accumulating over two k-chunks: the second chunk's tiles load while the
// first chunk multiplies.
// CHECK-LABEL:  glow_ir.func @accumulate
// CHECK:          %kb0 = glow_accel.dma_start %y[0, 0] -> %b0[0, 0]
// CHECK-NEXT:     %a1 = glow_accel.scratchpad_alloc
// CHECK-NEXT:     %ka1 = glow_accel.dma_start %x[0, 4] -> %a1[0, 0]
// CHECK-NEXT:     %b1 = glow_accel.scratchpad_alloc
// CHECK-NEXT:     %kb1 = glow_accel.dma_start %y[4, 0] -> %b1[0, 0]
// CHECK-NEXT:     glow_accel.dma_wait %ka0
// CHECK-NEXT:     glow_accel.dma_wait %kb0
// CHECK-NEXT:     glow_accel.matmul @out %c, @in %a0, @in %b0
// CHECK-NEXT:     glow_accel.scratchpad_free %a0
// CHECK-NEXT:     glow_accel.scratchpad_free %b0
// CHECK-NEXT:     glow_accel.dma_wait %ka1
// CHECK-NEXT:     glow_accel.dma_wait %kb1
// CHECK-NEXT:     glow_accel.matmul @inout %c, @in %a1, @in %b1 {accumulate}
glow_ir.func @accumulate declare {
  glow_ir.weight @x mutable input : memref<8x8xf32>
  glow_ir.weight @y mutable input : memref<8x8xf32>
  glow_ir.weight @z mutable output : memref<8x8xf32>
} program(%x, %y, %z) {
  %c = glow_accel.scratchpad_alloc : memref<4x4xf32, 1>
  %a0 = glow_accel.scratchpad_alloc : memref<4x4xf32, 1>
  %ka0 = glow_accel.dma_start %x[0, 0] -> %a0[0, 0] sizes [4, 4] : memref<8x8xf32> -> memref<4x4xf32, 1>
  %b0 = glow_accel.scratchpad_alloc : memref<4x4xf32, 1>
  %kb0 = glow_accel.dma_start %y[0, 0] -> %b0[0, 0] sizes [4, 4] : memref<8x8xf32> -> memref<4x4xf32, 1>
  glow_accel.dma_wait %ka0
  glow_accel.dma_wait %kb0
  glow_accel.matmul @out %c, @in %a0, @in %b0 : memref<4x4xf32, 1>
  glow_accel.scratchpad_free %a0 : memref<4x4xf32, 1>
  glow_accel.scratchpad_free %b0 : memref<4x4xf32, 1>
  %a1 = glow_accel.scratchpad_alloc : memref<4x4xf32, 1>
  %ka1 = glow_accel.dma_start %x[0, 4] -> %a1[0, 0] sizes [4, 4] : memref<8x8xf32> -> memref<4x4xf32, 1>
  %b1 = glow_accel.scratchpad_alloc : memref<4x4xf32, 1>
  %kb1 = glow_accel.dma_start %y[4, 0] -> %b1[0, 0] sizes [4, 4] : memref<8x8xf32> -> memref<4x4xf32, 1>
  glow_accel.dma_wait %ka1
  glow_accel.dma_wait %kb1
  glow_accel.matmul @inout %c, @in %a1, @in %b1 {accumulate} : memref<4x4xf32, 1>
  glow_accel.scratchpad_free %a1 : memref<4x4xf32, 1>
  glow_accel.scratchpad_free %b1 : memref<4x4xf32, 1>
  %s = glow_accel.dma_start %c[0, 0] -> %z[0, 0] sizes [4, 4] : memref<4x4xf32, 1> -> memref<8x8xf32>
  glow_accel.dma_wait %s
  glow_accel.scratchpad_free %c : memref<4x4xf32, 1>
} attributes {glow_accel.target = #glow_accel.target<scratchpad_bytes = 4096, dma_bytes_per_cycle = 32, dma_latency = 64, macs_per_cycle = 256, vector_width = 16, alignment = 64>}

// -----

// A scratchpad 11 tiles of 64 bytes large. The relu's result %r and the accumulator %c
// outlive a step; the loaded tiles live one. With first fit alone, %c would take the
// bytes %t left below %r, and when %b1 (128 bytes) is prefetched the 128 free bytes are
// two 64-byte holes on either side of %r: refused. Placed by the planner's rule (%r and
// %c from the top, loaded tiles from the bottom), the holes stay whole: both chunks of
// the second matmul step load while the first multiplies.
// CHECK-LABEL:  glow_ir.func @resident
// CHECK:          %c = glow_accel.scratchpad_alloc
// CHECK-NEXT:     %a1 = glow_accel.scratchpad_alloc
// CHECK-NEXT:     %ka1 = glow_accel.dma_start %p[0, 8] -> %a1[0, 0]
// CHECK-NEXT:     %b1 = glow_accel.scratchpad_alloc
// CHECK-NEXT:     %kb1 = glow_accel.dma_start %q[8, 0] -> %b1[0, 0]
// CHECK-NEXT:     glow_accel.dma_wait %ka0
// CHECK-NEXT:     glow_accel.dma_wait %kb0
// CHECK-NEXT:     glow_accel.matmul @out %c, @in %a0, @in %b0
glow_ir.func @resident declare {
  glow_ir.weight @x mutable input : memref<4x8xf32>
  glow_ir.weight @y mutable output : memref<4x8xf32>
  glow_ir.weight @p mutable input : memref<4x16xf32>
  glow_ir.weight @q mutable input : memref<16x4xf32>
  glow_ir.weight @z mutable output : memref<4x4xf32>
} program(%x, %y, %p, %q, %z) {
  %t = glow_accel.scratchpad_alloc : memref<4x8xf32, 1>
  %kt = glow_accel.dma_start %x[0, 0] -> %t[0, 0] sizes [4, 8] : memref<4x8xf32> -> memref<4x8xf32, 1>
  %r = glow_accel.scratchpad_alloc : memref<4x8xf32, 1>
  glow_accel.dma_wait %kt
  glow_accel.elementwise @out %r, @in %t {kind = "relu"} : memref<4x8xf32, 1>
  glow_accel.scratchpad_free %t : memref<4x8xf32, 1>
  %sr = glow_accel.dma_start %r[0, 0] -> %y[0, 0] sizes [4, 8] : memref<4x8xf32, 1> -> memref<4x8xf32>
  glow_accel.dma_wait %sr
  glow_accel.scratchpad_free %r : memref<4x8xf32, 1>
  %c = glow_accel.scratchpad_alloc : memref<4x4xf32, 1>
  %a0 = glow_accel.scratchpad_alloc : memref<4x8xf32, 1>
  %ka0 = glow_accel.dma_start %p[0, 0] -> %a0[0, 0] sizes [4, 8] : memref<4x16xf32> -> memref<4x8xf32, 1>
  %b0 = glow_accel.scratchpad_alloc : memref<8x4xf32, 1>
  %kb0 = glow_accel.dma_start %q[0, 0] -> %b0[0, 0] sizes [8, 4] : memref<16x4xf32> -> memref<8x4xf32, 1>
  glow_accel.dma_wait %ka0
  glow_accel.dma_wait %kb0
  glow_accel.matmul @out %c, @in %a0, @in %b0 : memref<4x4xf32, 1>, memref<4x8xf32, 1>, memref<8x4xf32, 1>
  glow_accel.scratchpad_free %a0 : memref<4x8xf32, 1>
  glow_accel.scratchpad_free %b0 : memref<8x4xf32, 1>
  %a1 = glow_accel.scratchpad_alloc : memref<4x8xf32, 1>
  %ka1 = glow_accel.dma_start %p[0, 8] -> %a1[0, 0] sizes [4, 8] : memref<4x16xf32> -> memref<4x8xf32, 1>
  %b1 = glow_accel.scratchpad_alloc : memref<8x4xf32, 1>
  %kb1 = glow_accel.dma_start %q[8, 0] -> %b1[0, 0] sizes [8, 4] : memref<16x4xf32> -> memref<8x4xf32, 1>
  glow_accel.dma_wait %ka1
  glow_accel.dma_wait %kb1
  glow_accel.matmul @inout %c, @in %a1, @in %b1 {accumulate} : memref<4x4xf32, 1>, memref<4x8xf32, 1>, memref<8x4xf32, 1>
  glow_accel.scratchpad_free %a1 : memref<4x8xf32, 1>
  glow_accel.scratchpad_free %b1 : memref<8x4xf32, 1>
  %s = glow_accel.dma_start %c[0, 0] -> %z[0, 0] sizes [4, 4] : memref<4x4xf32, 1> -> memref<4x4xf32>
  glow_accel.dma_wait %s
  glow_accel.scratchpad_free %c : memref<4x4xf32, 1>
} attributes {glow_accel.target = #glow_accel.target<scratchpad_bytes = 704, dma_bytes_per_cycle = 32, dma_latency = 64, macs_per_cycle = 256, vector_width = 16, alignment = 64>}
