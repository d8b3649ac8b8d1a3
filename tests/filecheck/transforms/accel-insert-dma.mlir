// RUN: glow-opt %s --split-input-file --accel-insert-dma | FileCheck %s

// One blocking step: each load starts right after its tile's alloc, the waits sink to
// the compute op that reads the tiles (in their order); the store's wait stays before
// the tile's free.
// CHECK-LABEL:  glow_ir.func @hoist_and_sink
// CHECK:          %a = glow_accel.scratchpad_alloc
// CHECK-NEXT:     %ka = glow_accel.dma_start %x[0, 0] -> %a[0, 0]
// CHECK-NEXT:     %b = glow_accel.scratchpad_alloc
// CHECK-NEXT:     %kb = glow_accel.dma_start %y[0, 0] -> %b[0, 0]
// CHECK-NEXT:     %c = glow_accel.scratchpad_alloc
// CHECK-NEXT:     glow_accel.dma_wait %ka
// CHECK-NEXT:     glow_accel.dma_wait %kb
// CHECK-NEXT:     glow_accel.elementwise @out %c, @in %a, @in %b
// CHECK-NEXT:     %kc = glow_accel.dma_start %c[0, 0] -> %z[0, 0]
// CHECK-NEXT:     glow_accel.scratchpad_free %a
// CHECK-NEXT:     glow_accel.scratchpad_free %b
// CHECK-NEXT:     glow_accel.dma_wait %kc
// CHECK-NEXT:     glow_accel.scratchpad_free %c
// CHECK-NEXT:   }
glow_ir.func @hoist_and_sink declare {
  glow_ir.weight @x mutable input : memref<8x8xf32>
  glow_ir.weight @y mutable input : memref<8x8xf32>
  glow_ir.weight @z mutable output : memref<8x8xf32>
} program(%x, %y, %z) {
  %a = glow_accel.scratchpad_alloc : memref<4x8xf32, 1>
  %b = glow_accel.scratchpad_alloc : memref<4x8xf32, 1>
  %c = glow_accel.scratchpad_alloc : memref<4x8xf32, 1>
  %ka = glow_accel.dma_start %x[0, 0] -> %a[0, 0] sizes [4, 8] : memref<8x8xf32> -> memref<4x8xf32, 1>
  glow_accel.dma_wait %ka
  %kb = glow_accel.dma_start %y[0, 0] -> %b[0, 0] sizes [4, 8] : memref<8x8xf32> -> memref<4x8xf32, 1>
  glow_accel.dma_wait %kb
  glow_accel.elementwise @out %c, @in %a, @in %b {kind = "element_add"} : memref<4x8xf32, 1>
  %kc = glow_accel.dma_start %c[0, 0] -> %z[0, 0] sizes [4, 8] : memref<4x8xf32, 1> -> memref<8x8xf32>
  glow_accel.dma_wait %kc
  glow_accel.scratchpad_free %a : memref<4x8xf32, 1>
  glow_accel.scratchpad_free %b : memref<4x8xf32, 1>
  glow_accel.scratchpad_free %c : memref<4x8xf32, 1>
} attributes {glow_accel.target = #glow_accel.target<scratchpad_bytes = 4096, dma_bytes_per_cycle = 32, dma_latency = 64, macs_per_cycle = 256, vector_width = 16, alignment = 64>}

// -----

// A store to @z and a later step: the store's wait sinks past the next step's load of
// other bytes and its compute, and stops before the load of the bytes it writes (%z
// rows 0-3, read through a view of %z's bytes); that load cannot start before it.
// CHECK-LABEL:  glow_ir.func @store_then_dependent_load
// CHECK:          %ks = glow_accel.dma_start %a[0, 0] -> %z[0, 0]
// CHECK-NEXT:     %b = glow_accel.scratchpad_alloc
// CHECK-NEXT:     %kb = glow_accel.dma_start %x[4, 0] -> %b[0, 0]
// CHECK-NEXT:     glow_accel.dma_wait %kb
// CHECK-NEXT:     glow_accel.elementwise @out %b, @in %b
// CHECK-NEXT:     %c = glow_accel.scratchpad_alloc
// CHECK-NEXT:     glow_accel.dma_wait %ks
// CHECK-NEXT:     %kc = glow_accel.dma_start %zv[6, 0] -> %c[0, 0]
// CHECK-NEXT:     glow_accel.dma_wait %kc
glow_ir.func @store_then_dependent_load declare {
  glow_ir.weight @x mutable input : memref<8x8xf32>
  glow_ir.weight @z mutable output : memref<8x8xf32>
} program(%x, %z) {
  %zv = glow_ir.tensor_view %z[0, 0] : memref<8x8xf32> to memref<16x4xf32>
  %a = glow_accel.scratchpad_alloc : memref<4x8xf32, 1>
  %ka = glow_accel.dma_start %x[0, 0] -> %a[0, 0] sizes [4, 8] : memref<8x8xf32> -> memref<4x8xf32, 1>
  glow_accel.dma_wait %ka
  glow_accel.elementwise @out %a, @in %a {kind = "relu"} : memref<4x8xf32, 1>
  %ks = glow_accel.dma_start %a[0, 0] -> %z[0, 0] sizes [4, 8] : memref<4x8xf32, 1> -> memref<8x8xf32>
  glow_accel.dma_wait %ks
  %b = glow_accel.scratchpad_alloc : memref<4x8xf32, 1>
  %kb = glow_accel.dma_start %x[4, 0] -> %b[0, 0] sizes [4, 8] : memref<8x8xf32> -> memref<4x8xf32, 1>
  glow_accel.dma_wait %kb
  glow_accel.elementwise @out %b, @in %b {kind = "relu"} : memref<4x8xf32, 1>
  %c = glow_accel.scratchpad_alloc : memref<2x4xf32, 1>
  %kc = glow_accel.dma_start %zv[6, 0] -> %c[0, 0] sizes [2, 4] : memref<16x4xf32> -> memref<2x4xf32, 1>
  glow_accel.dma_wait %kc
  glow_accel.elementwise @out %c, @in %c {kind = "relu"} : memref<2x4xf32, 1>
  glow_accel.scratchpad_free %c : memref<2x4xf32, 1>
  glow_accel.scratchpad_free %b : memref<4x8xf32, 1>
  glow_accel.scratchpad_free %a : memref<4x8xf32, 1>
} attributes {glow_accel.target = #glow_accel.target<scratchpad_bytes = 4096, dma_bytes_per_cycle = 32, dma_latency = 64, macs_per_cycle = 256, vector_width = 16, alignment = 64>}

// -----

// A weight panel loaded again by the next step while nothing wrote it: the second load
// goes, the second step reads the first tile, which lives until the second one's free.
// CHECK-LABEL:  glow_ir.func @drop_reload
// CHECK:          %w1 = glow_accel.scratchpad_alloc
// CHECK-NEXT:     %k1 = glow_accel.dma_start %w[0, 0] -> %w1[0, 0]
// CHECK:          glow_accel.matmul @out %c1, @in %a1, @in %w1
// CHECK-NEXT:     glow_accel.scratchpad_free %a1
// CHECK-NOT:      glow_accel.scratchpad_free %w1
// CHECK-NOT:      %w2
// CHECK-NOT:      %k4
// CHECK:          %a2 = glow_accel.scratchpad_alloc
// CHECK:          glow_accel.matmul @out %c2, @in %a2, @in %w1
// CHECK-NEXT:     glow_accel.scratchpad_free %w1
// CHECK-NEXT:     glow_accel.scratchpad_free %a2
glow_ir.func @drop_reload declare {
  glow_ir.weight @x mutable input : memref<8x8xf32>
  glow_ir.weight @w mutable input : memref<8x8xf32>
  glow_ir.weight @z mutable output : memref<8x8xf32>
} program(%x, %w, %z) {
  %w1 = glow_accel.scratchpad_alloc : memref<8x4xf32, 1>
  %k1 = glow_accel.dma_start %w[0, 0] -> %w1[0, 0] sizes [8, 4] : memref<8x8xf32> -> memref<8x4xf32, 1>
  glow_accel.dma_wait %k1
  %a1 = glow_accel.scratchpad_alloc : memref<4x8xf32, 1>
  %k2 = glow_accel.dma_start %x[0, 0] -> %a1[0, 0] sizes [4, 8] : memref<8x8xf32> -> memref<4x8xf32, 1>
  glow_accel.dma_wait %k2
  %c1 = glow_accel.scratchpad_alloc : memref<4x4xf32, 1>
  glow_accel.matmul @out %c1, @in %a1, @in %w1 : memref<4x4xf32, 1>, memref<4x8xf32, 1>, memref<8x4xf32, 1>
  glow_accel.scratchpad_free %w1 : memref<8x4xf32, 1>
  glow_accel.scratchpad_free %a1 : memref<4x8xf32, 1>
  %k3 = glow_accel.dma_start %c1[0, 0] -> %z[0, 0] sizes [4, 4] : memref<4x4xf32, 1> -> memref<8x8xf32>
  glow_accel.dma_wait %k3
  glow_accel.scratchpad_free %c1 : memref<4x4xf32, 1>
  %w2 = glow_accel.scratchpad_alloc : memref<8x4xf32, 1>
  %k4 = glow_accel.dma_start %w[0, 0] -> %w2[0, 0] sizes [8, 4] : memref<8x8xf32> -> memref<8x4xf32, 1>
  glow_accel.dma_wait %k4
  %a2 = glow_accel.scratchpad_alloc : memref<4x8xf32, 1>
  %k5 = glow_accel.dma_start %x[4, 0] -> %a2[0, 0] sizes [4, 8] : memref<8x8xf32> -> memref<4x8xf32, 1>
  glow_accel.dma_wait %k5
  %c2 = glow_accel.scratchpad_alloc : memref<4x4xf32, 1>
  glow_accel.matmul @out %c2, @in %a2, @in %w2 : memref<4x4xf32, 1>, memref<4x8xf32, 1>, memref<8x4xf32, 1>
  glow_accel.scratchpad_free %w2 : memref<8x4xf32, 1>
  glow_accel.scratchpad_free %a2 : memref<4x8xf32, 1>
  %k6 = glow_accel.dma_start %c2[0, 0] -> %z[4, 0] sizes [4, 4] : memref<4x4xf32, 1> -> memref<8x8xf32>
  glow_accel.dma_wait %k6
  glow_accel.scratchpad_free %c2 : memref<4x4xf32, 1>
} attributes {glow_accel.target = #glow_accel.target<scratchpad_bytes = 4096, dma_bytes_per_cycle = 32, dma_latency = 64, macs_per_cycle = 256, vector_width = 16, alignment = 64>}

// -----

// Must not drop: between the two loads of %x[0..4] a store writes those bytes.
// CHECK-LABEL:  glow_ir.func @keep_reload_after_store
// CHECK:          %k2 = glow_accel.dma_start %c[0, 0] -> %x[0, 0]
// CHECK-NEXT:     glow_accel.dma_wait %k2
// CHECK-NEXT:     glow_accel.scratchpad_free %c
// CHECK-NEXT:     %b = glow_accel.scratchpad_alloc
// CHECK-NEXT:     %k3 = glow_accel.dma_start %x[0, 0] -> %b[0, 0]
// CHECK-NEXT:     glow_accel.dma_wait %k3
// CHECK-NEXT:     glow_accel.elementwise @out %b, @in %a, @in %b
glow_ir.func @keep_reload_after_store declare {
  glow_ir.weight @x mutable input : memref<8x8xf32>
} program(%x) {
  %a = glow_accel.scratchpad_alloc : memref<4x8xf32, 1>
  %k1 = glow_accel.dma_start %x[0, 0] -> %a[0, 0] sizes [4, 8] : memref<8x8xf32> -> memref<4x8xf32, 1>
  glow_accel.dma_wait %k1
  %c = glow_accel.scratchpad_alloc : memref<4x8xf32, 1>
  glow_accel.elementwise @out %c, @in %a {kind = "relu"} : memref<4x8xf32, 1>
  %k2 = glow_accel.dma_start %c[0, 0] -> %x[0, 0] sizes [4, 8] : memref<4x8xf32, 1> -> memref<8x8xf32>
  glow_accel.dma_wait %k2
  glow_accel.scratchpad_free %c : memref<4x8xf32, 1>
  %b = glow_accel.scratchpad_alloc : memref<4x8xf32, 1>
  %k3 = glow_accel.dma_start %x[0, 0] -> %b[0, 0] sizes [4, 8] : memref<8x8xf32> -> memref<4x8xf32, 1>
  glow_accel.dma_wait %k3
  glow_accel.elementwise @out %b, @in %a, @in %b {kind = "element_add"} : memref<4x8xf32, 1>
  glow_accel.scratchpad_free %b : memref<4x8xf32, 1>
  glow_accel.scratchpad_free %a : memref<4x8xf32, 1>
} attributes {glow_accel.target = #glow_accel.target<scratchpad_bytes = 4096, dma_bytes_per_cycle = 32, dma_latency = 64, macs_per_cycle = 256, vector_width = 16, alignment = 64>}

// -----

// Must not drop: the first tile was overwritten by compute (it no longer holds %x's
// bytes), and a store's wait never sinks past the dealloc of its main buffer.
// CHECK-LABEL:  glow_ir.func @keep_reload_of_written_tile
// CHECK:          %b = glow_accel.scratchpad_alloc
// CHECK-NEXT:     %k3 = glow_accel.dma_start %x[0, 0] -> %b[0, 0]
// CHECK-NEXT:     glow_accel.dma_wait %k3
// CHECK-NEXT:     glow_accel.elementwise @out %b, @in %a, @in %b
// CHECK-NEXT:     %k4 = glow_accel.dma_start %b[0, 0] -> %act[0, 0]
// CHECK-NEXT:     glow_accel.elementwise @out %a, @in %a
// CHECK-NEXT:     glow_accel.dma_wait %k4
// CHECK-NEXT:     glow_ir.dealloc_activation %act
glow_ir.func @keep_reload_of_written_tile declare {
  glow_ir.weight @x mutable input : memref<8x8xf32>
} program(%x) {
  %act = glow_ir.alloc_activation : memref<8x8xf32>
  %a = glow_accel.scratchpad_alloc : memref<4x8xf32, 1>
  %k1 = glow_accel.dma_start %x[0, 0] -> %a[0, 0] sizes [4, 8] : memref<8x8xf32> -> memref<4x8xf32, 1>
  glow_accel.dma_wait %k1
  glow_accel.elementwise @out %a, @in %a {kind = "relu"} : memref<4x8xf32, 1>
  %b = glow_accel.scratchpad_alloc : memref<4x8xf32, 1>
  %k3 = glow_accel.dma_start %x[0, 0] -> %b[0, 0] sizes [4, 8] : memref<8x8xf32> -> memref<4x8xf32, 1>
  glow_accel.dma_wait %k3
  glow_accel.elementwise @out %b, @in %a, @in %b {kind = "element_add"} : memref<4x8xf32, 1>
  %k4 = glow_accel.dma_start %b[0, 0] -> %act[0, 0] sizes [4, 8] : memref<4x8xf32, 1> -> memref<8x8xf32>
  glow_accel.dma_wait %k4
  glow_accel.elementwise @out %a, @in %a {kind = "relu"} : memref<4x8xf32, 1>
  glow_ir.dealloc_activation %act : memref<8x8xf32>
  glow_accel.scratchpad_free %b : memref<4x8xf32, 1>
  glow_accel.scratchpad_free %a : memref<4x8xf32, 1>
} attributes {glow_accel.target = #glow_accel.target<scratchpad_bytes = 4096, dma_bytes_per_cycle = 32, dma_latency = 64, macs_per_cycle = 256, vector_width = 16, alignment = 64>}

// -----

// A wait on two transfers becomes one wait per transfer, each before the first op that
// reads its tile.
// CHECK-LABEL:  glow_ir.func @split_wait
// CHECK:          %k1 = glow_accel.dma_start %x[0, 0] -> %a[0, 0]
// CHECK-NEXT:     %b = glow_accel.scratchpad_alloc
// CHECK-NEXT:     %k2 = glow_accel.dma_start %x[4, 0] -> %b[0, 0]
// CHECK-NEXT:     glow_accel.dma_wait %k1
// CHECK-NEXT:     glow_accel.elementwise @out %a, @in %a
// CHECK-NEXT:     glow_accel.dma_wait %k2
// CHECK-NEXT:     glow_accel.elementwise @out %b, @in %b
glow_ir.func @split_wait declare {
  glow_ir.weight @x mutable input : memref<8x8xf32>
} program(%x) {
  %a = glow_accel.scratchpad_alloc : memref<4x8xf32, 1>
  %b = glow_accel.scratchpad_alloc : memref<4x8xf32, 1>
  %k1 = glow_accel.dma_start %x[0, 0] -> %a[0, 0] sizes [4, 8] : memref<8x8xf32> -> memref<4x8xf32, 1>
  %k2 = glow_accel.dma_start %x[4, 0] -> %b[0, 0] sizes [4, 8] : memref<8x8xf32> -> memref<4x8xf32, 1>
  glow_accel.dma_wait %k1, %k2
  glow_accel.elementwise @out %a, @in %a {kind = "relu"} : memref<4x8xf32, 1>
  glow_accel.elementwise @out %b, @in %b {kind = "relu"} : memref<4x8xf32, 1>
  glow_accel.scratchpad_free %b : memref<4x8xf32, 1>
  glow_accel.scratchpad_free %a : memref<4x8xf32, 1>
} attributes {glow_accel.target = #glow_accel.target<scratchpad_bytes = 4096, dma_bytes_per_cycle = 32, dma_latency = 64, macs_per_cycle = 256, vector_width = 16, alignment = 64>}
