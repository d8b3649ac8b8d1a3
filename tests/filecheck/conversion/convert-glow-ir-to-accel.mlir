// convert-glow-ir-to-accel: every instruction becomes tile steps (alloc, blocking loads,
// compute on the tiles, blocking stores, frees), each step within half the scratchpad.
// Small scratchpads (the functions' own glow_accel.target) force the tilings.
//
// The last two chunks cannot be converted (ERR): glow-opt prints the others and fails.
// RUN: not glow-opt %s --split-input-file --convert-glow-ir-to-accel 2>/dev/null | FileCheck %s
// RUN: not glow-opt %s --split-input-file --convert-glow-ir-to-accel=scratchpad-kib=64 2>/dev/null | FileCheck %s --check-prefix=KIB
// Converted code has no instructions left: a second run changes nothing.
// RUN: not glow-opt %s --split-input-file --convert-glow-ir-to-accel --convert-glow-ir-to-accel 2>/dev/null | FileCheck %s
// RUN: not glow-opt %s --split-input-file --convert-glow-ir-to-accel 2>&1 | FileCheck %s --check-prefix=ERR
// RUN: not glow-opt %s --convert-glow-ir-to-accel=scratchpad-kib=0 2>&1 | FileCheck %s --check-prefix=OPT

// OPT: glow-opt: error: convert-glow-ir-to-accel: scratchpad-kib must be positive, got 0

// A matmul that fits in one step: whole A, B and C tiles, loads waited for at once, the
// store after the matmul, every tile freed. The function had no target: the option's
// (default 256 KiB, or scratchpad-kib) is recorded, with the lower bound (A + B + C once).
// CHECK-LABEL:  glow_ir.func @one_tile
// CHECK:          %[[A:.*]] = glow_accel.scratchpad_alloc : memref<4x8xf32, 1 : i64>
// CHECK-NEXT:     %[[KA:.*]] = glow_accel.dma_start %a[0, 0] -> %[[A]][0, 0] sizes [4, 8] : memref<4x8xf32> -> memref<4x8xf32, 1 : i64>
// CHECK-NEXT:     glow_accel.dma_wait %[[KA]]
// CHECK-NEXT:     %[[B:.*]] = glow_accel.scratchpad_alloc : memref<8x4xf32, 1 : i64>
// CHECK-NEXT:     %[[KB:.*]] = glow_accel.dma_start %b[0, 0] -> %[[B]][0, 0] sizes [8, 4]
// CHECK-NEXT:     glow_accel.dma_wait %[[KB]]
// CHECK-NEXT:     %[[C:.*]] = glow_accel.scratchpad_alloc : memref<4x4xf32, 1 : i64>
// CHECK-NEXT:     glow_accel.matmul @out %[[C]], @in %[[A]], @in %[[B]] : memref<4x4xf32, 1 : i64>, memref<4x8xf32, 1 : i64>, memref<8x4xf32, 1 : i64>
// CHECK-NEXT:     %[[KC:.*]] = glow_accel.dma_start %[[C]][0, 0] -> %c[0, 0] sizes [4, 4] : memref<4x4xf32, 1 : i64> -> memref<4x4xf32>
// CHECK-NEXT:     glow_accel.dma_wait %[[KC]]
// CHECK-NEXT:     glow_accel.scratchpad_free %[[A]]
// CHECK-NEXT:     glow_accel.scratchpad_free %[[B]]
// CHECK-NEXT:     glow_accel.scratchpad_free %[[C]]
// CHECK-NEXT:   } attributes {glow_accel.target = #glow_accel.target<scratchpad_bytes = 262144, {{.*}}>, glow_accel.dma_lower_bound = 320 : i64}
// KIB-LABEL:    glow_ir.func @one_tile
// KIB:          glow_accel.target = #glow_accel.target<scratchpad_bytes = 65536,
glow_ir.func @one_tile declare {
  glow_ir.weight @a mutable input : memref<4x8xf32>
  glow_ir.weight @b mutable input : memref<8x4xf32>
  glow_ir.weight @c mutable output : memref<4x4xf32>
} program(%a, %b, %c) {
  glow_ir.mat_mul @out %c, @in %a, @in %b : memref<4x4xf32>, memref<4x8xf32>, memref<8x4xf32>
}

// -----

// 2 KiB: k is chunked (13, 13, 13, 13, 12); the first chunk overwrites the C tile, the
// others accumulate into it; C is stored once, after the last chunk. Only the A and B
// chunks need a second copy (C 256 + 2 * (448 + 448) aligned bytes = 2048). A function's
// own target wins over the option.
// CHECK-LABEL:  glow_ir.func @k_chunks
// CHECK:          glow_accel.dma_start %a[0, 0] -> %{{.*}}[0, 0] sizes [8, 13]
// CHECK:          glow_accel.dma_start %b[0, 0] -> %{{.*}}[0, 0] sizes [13, 8]
// CHECK:          %[[C:.*]] = glow_accel.scratchpad_alloc : memref<8x8xf32, 1 : i64>
// CHECK-NEXT:     glow_accel.matmul @out %[[C]], @in
// CHECK-NOT:      -> %c
// CHECK:          glow_accel.dma_start %a[0, 13] -> %{{.*}}[0, 0] sizes [8, 13]
// CHECK:          glow_accel.matmul @inout %[[C]], @in %{{.*}}, @in %{{.*}} {accumulate}
// CHECK-NOT:      -> %c
// CHECK:          glow_accel.dma_start %a[0, 52] -> %{{.*}}[0, 0] sizes [8, 12]
// CHECK:          glow_accel.dma_start %b[52, 0] -> %{{.*}}[0, 0] sizes [12, 8]
// CHECK-NEXT:     glow_accel.dma_wait
// CHECK-NEXT:     glow_accel.matmul @inout %[[C]], @in %{{.*}}, @in %{{.*}} {accumulate}
// CHECK-NEXT:     %[[K:.*]] = glow_accel.dma_start %[[C]][0, 0] -> %c[0, 0] sizes [8, 8]
// CHECK-NEXT:     glow_accel.dma_wait %[[K]]
// CHECK-NEXT:     glow_accel.scratchpad_free %[[C]]
// KIB-LABEL:    glow_ir.func @k_chunks
// KIB:          glow_accel.target = #glow_accel.target<scratchpad_bytes = 2048,
glow_ir.func @k_chunks declare {
  glow_ir.weight @a mutable input : memref<8x64xf32>
  glow_ir.weight @b mutable input : memref<64x8xf32>
  glow_ir.weight @c mutable output : memref<8x8xf32>
} program(%a, %b, %c) {
  glow_ir.mat_mul @out %c, @in %a, @in %b : memref<8x8xf32>, memref<8x64xf32>, memref<64x8xf32>
} attributes {glow_accel.target = #glow_accel.target<scratchpad_bytes = 2048, dma_bytes_per_cycle = 32, dma_latency = 64, macs_per_cycle = 256, vector_width = 16, alignment = 64>}

// -----

// A matrix-vector product: the vector (A's only row panel, all of k) is loaded once and
// stays resident while the weight goes by in column blocks of 14 (the last 12): every
// byte moves once, the lower bound.
// CHECK-LABEL:  glow_ir.func @mat_vec
// CHECK:          %[[X:.*]] = glow_accel.scratchpad_alloc : memref<1x16xf32, 1 : i64>
// CHECK-NEXT:     glow_accel.dma_start %x[0, 0] -> %[[X]][0, 0] sizes [1, 16]
// CHECK-NOT:      glow_accel.dma_start %x
// CHECK:          glow_accel.dma_start %w[0, 0] -> %{{.*}}[0, 0] sizes [16, 14]
// CHECK:          glow_accel.matmul @out %{{.*}}, @in %[[X]], @in
// CHECK:          -> %y[0, 0] sizes [1, 14]
// CHECK-NOT:      glow_accel.scratchpad_free %[[X]]
// CHECK-NOT:      glow_accel.dma_start %x
// CHECK:          glow_accel.dma_start %w[0, 14] -> %{{.*}}[0, 0] sizes [16, 14]
// CHECK:          glow_accel.matmul @out %{{.*}}, @in %[[X]], @in
// CHECK-NOT:      glow_accel.dma_start %x
// CHECK:          glow_accel.dma_start %w[0, 84] -> %{{.*}}[0, 0] sizes [16, 12]
// CHECK:          glow_accel.matmul @out %{{.*}}, @in %[[X]], @in
// CHECK:          -> %y[0, 84] sizes [1, 12]
// CHECK:          glow_accel.scratchpad_free %[[X]]
// CHECK-NEXT:     glow_accel.scratchpad_free
// CHECK-NEXT:     glow_accel.scratchpad_free
// CHECK-NEXT:   } attributes {{{.*}}, glow_accel.dma_lower_bound = 6592 : i64}
glow_ir.func @mat_vec declare {
  glow_ir.weight @x mutable input : memref<1x16xf32>
  glow_ir.weight @w constant input : memref<16x96xf32>
  glow_ir.weight @y mutable output : memref<1x96xf32>
} program(%x, %w, %y) {
  glow_ir.mat_mul @out %y, @in %x, @in %w : memref<1x96xf32>, memref<1x16xf32>, memref<16x96xf32>
} attributes {glow_accel.target = #glow_accel.target<scratchpad_bytes = 2048, dma_bytes_per_cycle = 32, dma_latency = 64, macs_per_cycle = 256, vector_width = 16, alignment = 64>}

// -----

// Element-wise kinds go in 1-D chunks of flat views (made where needed); the result is
// computed into the first source's tile. In place (add into %a) works the same way; a
// copy needs no compute unit: load, then store the same tile. The glow_ir memory ops stay.
// CHECK-LABEL:  glow_ir.func @elementwise
// CHECK:          %a = glow_ir.alloc_activation {offset = 0 : i64} : memref<2x200xf32>
// CHECK-NEXT:     %[[XF:.*]] = glow_ir.tensor_view %x[0, 0] : memref<2x200xf32> to memref<400xf32>
// CHECK-NEXT:     %[[AF:.*]] = glow_ir.tensor_view %a[0, 0] : memref<2x200xf32> to memref<400xf32>
// CHECK-NEXT:     %[[T:.*]] = glow_accel.scratchpad_alloc : memref<200xf32, 1 : i64>
// CHECK-NEXT:     glow_accel.dma_start %[[XF]][0] -> %[[T]][0] sizes [200]
// CHECK-NEXT:     glow_accel.dma_wait
// CHECK-NEXT:     glow_accel.elementwise @out %[[T]], @in %[[T]] {kind = "relu"} : memref<200xf32, 1 : i64>
// CHECK-NEXT:     glow_accel.dma_start %[[T]][0] -> %[[AF]][0] sizes [200]
// CHECK:          glow_accel.dma_start %{{.*}}[0] -> %[[AF]][200] sizes [200]
// CHECK:          %v = glow_ir.tensor_view %z[0] : memref<400xf32> to memref<2x200xf32>
// CHECK:          %[[U:.*]] = glow_accel.scratchpad_alloc : memref<100xf32, 1 : i64>
// CHECK:          %[[W:.*]] = glow_accel.scratchpad_alloc : memref<100xf32, 1 : i64>
// CHECK:          glow_accel.elementwise @out %[[U]], @in %[[U]], @in %[[W]] {kind = "element_add"} : memref<100xf32, 1 : i64>
// CHECK-COUNT-3:  {kind = "element_add"}
// CHECK-NOT:      glow_accel.elementwise
// CHECK:          %[[YF:.*]] = glow_ir.tensor_view %y[0, 0] : memref<2x200xf32> to memref<400xf32>
// CHECK-NEXT:     %[[CT:.*]] = glow_accel.scratchpad_alloc : memref<200xf32, 1 : i64>
// CHECK-NEXT:     glow_accel.dma_start %{{.*}}[0] -> %[[CT]][0] sizes [200]
// CHECK-NEXT:     glow_accel.dma_wait
// CHECK-NEXT:     glow_accel.dma_start %[[CT]][0] -> %[[YF]][0] sizes [200]
// CHECK:          glow_ir.dealloc_activation %a : memref<2x200xf32>
glow_ir.func @elementwise declare {
  glow_ir.weight @x mutable input : memref<2x200xf32>
  glow_ir.weight @z mutable input : memref<400xf32>
  glow_ir.weight @y mutable output : memref<2x200xf32>
} program(%x, %z, %y) {
  %a = glow_ir.alloc_activation {offset = 0 : i64} : memref<2x200xf32>
  glow_ir.relu @out %a, @in %x : memref<2x200xf32>
  %v = glow_ir.tensor_view %z[0] : memref<400xf32> to memref<2x200xf32>
  glow_ir.element_add @out %a, @in %a, @in %v : memref<2x200xf32>
  glow_ir.copy @out %y, @in %a : memref<2x200xf32>
  glow_ir.dealloc_activation %a : memref<2x200xf32>
} attributes {glow_accel.target = #glow_accel.target<scratchpad_bytes = 2048, dma_bytes_per_cycle = 32, dma_latency = 64, macs_per_cycle = 256, vector_width = 16, alignment = 64>}

// -----

// batched_add: row blocks of the batch; the slice's tile is loaded once and stays.
// CHECK-LABEL:  glow_ir.func @batched_add
// CHECK:          %[[S:.*]] = glow_accel.scratchpad_alloc : memref<100xf32, 1 : i64>
// CHECK-NEXT:     glow_accel.dma_start %b[0] -> %[[S]][0] sizes [100]
// CHECK-NOT:      glow_accel.dma_start %b
// CHECK-COUNT-6:  glow_accel.elementwise @out %{{.*}}, @in %{{.*}}, @in %[[S]] {kind = "batched_add"}
// CHECK-NOT:      glow_accel.dma_start %b
// CHECK:          glow_accel.scratchpad_free %[[S]]
glow_ir.func @batched_add declare {
  glow_ir.weight @x mutable input : memref<6x100xf32>
  glow_ir.weight @b constant input : memref<100xf32>
  glow_ir.weight @y mutable output : memref<6x100xf32>
} program(%x, %b, %y) {
  glow_ir.batched_add @out %y, @in %x, @in %b : memref<6x100xf32>, memref<6x100xf32>, memref<100xf32>
} attributes {glow_accel.target = #glow_accel.target<scratchpad_bytes = 2048, dma_bytes_per_cycle = 32, dma_latency = 64, macs_per_cycle = 256, vector_width = 16, alignment = 64>}

// -----

// 1 KiB: a 3x3 pad-1 convolution in 2x2 spatial tiles of 4x4 outputs, each accumulated
// over the 4 input channels. Each tile's input box is its windows clipped to the input
// (5x5), and its own pads are what its windows leave outside the input: [1, 1, 0, 0] at
// the top left, [1, 0, 0, 1] at the top right, ... The bias goes to the first chunk only,
// the fused relu to the last chunk only (it applies after the sum).
// CHECK-LABEL:  glow_ir.func @conv_borders
// CHECK:          glow_accel.dma_start %x[0, 0, 0, 0] -> %{{.*}}[0, 0, 0, 0] sizes [1, 1, 5, 5]
// CHECK:          glow_accel.dma_start %b[0] -> %{{.*}}[0] sizes [2]
// CHECK:          %[[O:.*]] = glow_accel.scratchpad_alloc : memref<1x2x4x4xf32, 1 : i64>
// CHECK-NEXT:     glow_accel.conv @out %[[O]], @in %{{.*}}, @in %{{.*}}, @in %{{.*}} {kernels = array<i64: 3, 3>, strides = array<i64: 1, 1>, pads = array<i64: 1, 1, 0, 0>, dilation = array<i64: 1, 1>, group = 1 : i64} : memref<1x2x4x4xf32, 1 : i64>, memref<1x1x5x5xf32, 1 : i64>, memref<2x1x3x3xf32, 1 : i64>, memref<2xf32, 1 : i64>
// CHECK:          glow_accel.dma_start %x[0, 1, 0, 0] -> %{{.*}}[0, 0, 0, 0] sizes [1, 1, 5, 5]
// CHECK:          glow_accel.dma_start %f[0, 1, 0, 0] -> %{{.*}}[0, 0, 0, 0] sizes [2, 1, 3, 3]
// CHECK-NEXT:     glow_accel.dma_wait
// CHECK-NEXT:     glow_accel.conv @inout %[[O]], @in %{{[0-9]+}}, @in %{{[0-9]+}} {accumulate, kernels = array<i64: 3, 3>, strides = array<i64: 1, 1>, pads = array<i64: 1, 1, 0, 0>, dilation = array<i64: 1, 1>, group = 1 : i64} : memref<1x2x4x4xf32, 1 : i64>, memref<1x1x5x5xf32, 1 : i64>, memref<2x1x3x3xf32, 1 : i64>
// CHECK:          glow_accel.conv @inout %[[O]], {{.*}} {accumulate, {{.*}} pads = array<i64: 1, 1, 0, 0>, {{.*}} group = 1 : i64} :
// CHECK:          glow_accel.conv @inout %[[O]], {{.*}} {accumulate, {{.*}} pads = array<i64: 1, 1, 0, 0>, {{.*}}, fused_activation = "relu"}
// CHECK-NEXT:     glow_accel.dma_start %[[O]][0, 0, 0, 0] -> %y[0, 0, 0, 0] sizes [1, 2, 4, 4]
// CHECK:          glow_accel.dma_start %x[0, 0, 0, 3] -> %{{.*}}[0, 0, 0, 0] sizes [1, 1, 5, 5]
// CHECK:          glow_accel.conv @out {{.*}} pads = array<i64: 1, 0, 0, 1>
// CHECK:          fused_activation = "relu"
// CHECK-NEXT:     glow_accel.dma_start %{{.*}} -> %y[0, 0, 0, 4] sizes [1, 2, 4, 4]
// CHECK:          glow_accel.dma_start %x[0, 0, 3, 0] -> %{{.*}}[0, 0, 0, 0] sizes [1, 1, 5, 5]
// CHECK:          glow_accel.conv @out {{.*}} pads = array<i64: 0, 1, 1, 0>
// CHECK:          glow_accel.conv @out {{.*}} pads = array<i64: 0, 0, 1, 1>
// CHECK-COUNT-3:  {accumulate
// CHECK-NOT:      glow_accel.conv
// CHECK:          -> %y[0, 0, 4, 4] sizes [1, 2, 4, 4]
glow_ir.func @conv_borders declare {
  glow_ir.weight @x mutable input : memref<1x4x8x8xf32>
  glow_ir.weight @f constant input : memref<2x4x3x3xf32>
  glow_ir.weight @b constant input : memref<2xf32>
  glow_ir.weight @y mutable output : memref<1x2x8x8xf32>
} program(%x, %f, %b, %y) {
  glow_ir.convolution @out %y, @in %x, @in %f, @in %b {kernels = array<i64: 3, 3>, strides = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, dilation = array<i64: 1, 1>, group = 1 : i64, fused_activation = "relu"} : memref<1x2x8x8xf32>, memref<1x4x8x8xf32>, memref<2x4x3x3xf32>, memref<2xf32>
} attributes {glow_accel.target = #glow_accel.target<scratchpad_bytes = 1024, dma_bytes_per_cycle = 32, dma_latency = 64, macs_per_cycle = 256, vector_width = 16, alignment = 64>}

// -----

// 1 KiB: a 3x3 stride-2 pad-1 max pool by channel and column halves; the left tiles keep
// the left pad, the right ones read one halo column (input columns 5..11) and need none.
// CHECK-LABEL:  glow_ir.func @pool
// CHECK:          glow_accel.dma_start %x[0, 0, 0, 0] -> %{{.*}}[0, 0, 0, 0] sizes [1, 1, 12, 6]
// CHECK:          glow_accel.pool @out %{{.*}}, @in %{{.*}} {kind = "max_pool", kernels = array<i64: 3, 3>, strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 0, 0>} : memref<1x1x6x3xf32, 1 : i64>, memref<1x1x12x6xf32, 1 : i64>
// CHECK:          glow_accel.dma_start %x[0, 0, 0, 5] -> %{{.*}}[0, 0, 0, 0] sizes [1, 1, 12, 7]
// CHECK:          glow_accel.pool @out %{{.*}}, @in %{{.*}} {kind = "max_pool", kernels = array<i64: 3, 3>, strides = array<i64: 2, 2>, pads = array<i64: 1, 0, 0, 0>} : memref<1x1x6x3xf32, 1 : i64>, memref<1x1x12x7xf32, 1 : i64>
// CHECK:          -> %y[0, 0, 0, 3] sizes [1, 1, 6, 3]
// CHECK:          glow_accel.dma_start %x[0, 1, 0, 0]
// CHECK:          glow_accel.dma_start %x[0, 1, 0, 5]
// CHECK:          -> %y[0, 1, 0, 3] sizes [1, 1, 6, 3]
glow_ir.func @pool declare {
  glow_ir.weight @x mutable input : memref<1x2x12x12xf32>
  glow_ir.weight @y mutable output : memref<1x2x6x6xf32>
} program(%x, %y) {
  glow_ir.max_pool @out %y, @in %x {kernels = array<i64: 3, 3>, strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>} : memref<1x2x6x6xf32>, memref<1x2x12x12xf32>
} attributes {glow_accel.target = #glow_accel.target<scratchpad_bytes = 1024, dma_bytes_per_cycle = 32, dma_latency = 64, macs_per_cycle = 256, vector_width = 16, alignment = 64>}

// -----

// Data movement needs no compute unit: a slice is a DMA box of the source, an insertion
// stores the loaded tile at each place (count 2 along axis 1).
// CHECK-LABEL:  glow_ir.func @slices
// CHECK:          %[[T:.*]] = glow_accel.scratchpad_alloc : memref<2x3xf32, 1 : i64>
// CHECK-NEXT:     glow_accel.dma_start %x[1, 2] -> %[[T]][0, 0] sizes [2, 3]
// CHECK-NEXT:     glow_accel.dma_wait
// CHECK-NEXT:     glow_accel.dma_start %[[T]][0, 0] -> %s[0, 0] sizes [2, 3]
// CHECK:          %[[U:.*]] = glow_accel.scratchpad_alloc : memref<2x3xf32, 1 : i64>
// CHECK-NEXT:     glow_accel.dma_start %s[0, 0] -> %[[U]][0, 0] sizes [2, 3]
// CHECK-NEXT:     glow_accel.dma_wait
// CHECK-NEXT:     glow_accel.dma_start %[[U]][0, 0] -> %y[0, 0] sizes [2, 3]
// CHECK-NEXT:     glow_accel.dma_wait
// CHECK-NEXT:     glow_accel.dma_start %[[U]][0, 0] -> %y[0, 3] sizes [2, 3]
// CHECK-NEXT:     glow_accel.dma_wait
// CHECK-NEXT:     glow_accel.scratchpad_free %[[U]]
glow_ir.func @slices declare {
  glow_ir.weight @x mutable input : memref<4x6xf32>
  glow_ir.weight @s mutable output : memref<2x3xf32>
  glow_ir.weight @y mutable output : memref<2x6xf32>
} program(%x, %s, %y) {
  glow_ir.extract_tensor @out %s, @in %x {offsets = array<i64: 1, 2>} : memref<2x3xf32>, memref<4x6xf32>
  glow_ir.insert_tensor @inout %y, @in %s {offsets = array<i64: 0, 0>, count = 2 : i64, axis = 1 : i64} : memref<2x6xf32>, memref<2x3xf32>
}

// -----

// Nothing to convert: the function is left as it is (no target, no bound).
// CHECK-LABEL:  glow_ir.func @no_instructions
// CHECK-NEXT:     glow_ir.weight @x mutable input : memref<4xf32>
// CHECK-NEXT:   } program(%x) {
// CHECK-NEXT:     %a = glow_ir.alloc_activation : memref<4xf32>
// CHECK-NEXT:     %v = glow_ir.tensor_view %a[0] : memref<4xf32> to memref<2x2xf32>
// CHECK-NEXT:     glow_ir.dealloc_activation %a : memref<4xf32>
// CHECK-NEXT:   }
// CHECK-NEXT:  }
glow_ir.func @no_instructions declare {
  glow_ir.weight @x mutable input : memref<4xf32>
} program(%x) {
  %a = glow_ir.alloc_activation : memref<4xf32>
  %v = glow_ir.tensor_view %a[0] : memref<4xf32> to memref<2x2xf32>
  glow_ir.dealloc_activation %a : memref<4xf32>
}

// -----

// A reduction to a scalar cannot be split into independent blocks: whole buffers, which
// do not fit 1 KiB.
// ERR: error: convert-glow-ir-to-accel: glow_ir.batched_reduce_add at {{.*}}convert-glow-ir-to-accel.mlir:{{[0-9]+}}:3 needs at least 32896 bytes of scratchpad for its smallest tile (its whole operands, which cannot be split: 16448 bytes, and a step may use half of the scratchpad); the scratchpad has 1024 bytes
glow_ir.func @too_big declare {
  glow_ir.weight @x mutable input : memref<64x64xf32>
  glow_ir.weight @y mutable output : memref<f32>
} program(%x, %y) {
  glow_ir.batched_reduce_add @out %y, @in %x {axes = array<i64: 0, 1>} : memref<f32>, memref<64x64xf32>
} attributes {glow_accel.target = #glow_accel.target<scratchpad_bytes = 1024, dma_bytes_per_cycle = 32, dma_latency = 64, macs_per_cycle = 256, vector_width = 16, alignment = 64>}

// -----

// Even the smallest matmul step (a 1x1 C tile and, for double buffering, two 1x1 tiles
// each of A and B, each taking 64 aligned bytes) needs 320 bytes of scratchpad.
// ERR: error: convert-glow-ir-to-accel: glow_ir.mat_mul at {{.*}}:{{[0-9]+}}:3 needs at least 320 bytes of scratchpad for its smallest step (a 1x1 C tile and two 1x1 tiles each of A and B, each 64 aligned bytes); the scratchpad has 256 bytes
glow_ir.func @tiny_scratchpad declare {
  glow_ir.weight @a mutable input : memref<4x8xf32>
  glow_ir.weight @b mutable input : memref<8x4xf32>
  glow_ir.weight @c mutable output : memref<4x4xf32>
} program(%a, %b, %c) {
  glow_ir.mat_mul @out %c, @in %a, @in %b : memref<4x4xf32>, memref<4x8xf32>, memref<8x4xf32>
} attributes {glow_accel.target = #glow_accel.target<scratchpad_bytes = 256, dma_bytes_per_cycle = 32, dma_latency = 64, macs_per_cycle = 256, vector_width = 16, alignment = 64>}
