// convert-glow-ir-to-accel: every instruction becomes tile steps (alloc, blocking loads,
// compute on the tiles, blocking stores, frees), each step within half the scratchpad.
// Small scratchpads (the functions' own glow_accel.target) force the tilings.
//
// The last two chunks cannot be converted (an error at the instruction, checked with
// --verify-diagnostics): glow-opt prints the others and fails.
// RUN: not glow-opt %s --split-input-file --convert-glow-ir-to-accel 2>/dev/null | FileCheck %s
// RUN: not glow-opt %s --split-input-file --convert-glow-ir-to-accel=scratchpad-kib=64 2>/dev/null | FileCheck %s --check-prefix=KIB
// Converted code has no instructions left: a second run changes nothing.
// RUN: not glow-opt %s --split-input-file --convert-glow-ir-to-accel --convert-glow-ir-to-accel 2>/dev/null | FileCheck %s
// RUN: glow-opt %s --split-input-file --convert-glow-ir-to-accel --verify-diagnostics
// Epilogue fusion off: the element-wise instructions after a convolution or matmul are
// their own steps.
// RUN: not glow-opt %s --split-input-file --convert-glow-ir-to-accel=fuse-epilogues=false 2>/dev/null | FileCheck %s --check-prefix=NOFUSE
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

// Epilogue fusion (analysis/epilogue_fusion.py): ResNet's residual tail. The element_add
// and the relu run in place on each output tile of the convolution, in the step that
// stores it: the residual's tile of the same box is loaded there, and the tile is stored
// to %r once. No element-wise steps of their own (flat views, 1-D chunks) are left. The
// bound counts the group as one instruction: %x's residual read is already counted
// (the convolution reads all of %x), so x 512 + f 144 + b 8 + r 512.
// CHECK-LABEL:  glow_ir.func @fuse_conv_residual
// CHECK-NOT:      -> %r[
// CHECK:          %[[O0:.*]] = glow_accel.scratchpad_alloc : memref<1x2x8x3xf32, 1 : i64>
// CHECK-NEXT:     %[[X0:.*]] = glow_accel.scratchpad_alloc : memref<1x2x8x3xf32, 1 : i64>
// CHECK-NEXT:     %{{.*}} = glow_accel.dma_start %x[0, 0, 0, 0] -> %[[X0]][0, 0, 0, 0] sizes [1, 2, 8, 3]
// CHECK-NEXT:     glow_accel.dma_wait
// CHECK-NEXT:     glow_accel.conv @out %[[O0]], @in
// CHECK-NEXT:     glow_accel.elementwise @out %[[O0]], @in %[[O0]], @in %[[X0]] {kind = "element_add"} : memref<1x2x8x3xf32, 1 : i64>
// CHECK-NEXT:     glow_accel.elementwise @out %[[O0]], @in %[[O0]] {kind = "relu"} : memref<1x2x8x3xf32, 1 : i64>
// CHECK-NEXT:     %{{.*}} = glow_accel.dma_start %[[O0]][0, 0, 0, 0] -> %r[0, 0, 0, 0] sizes [1, 2, 8, 3]
// CHECK-NOT:      -> %r[
// CHECK:          %[[O1:.*]] = glow_accel.scratchpad_alloc : memref<1x2x8x3xf32, 1 : i64>
// CHECK-NEXT:     %[[X1:.*]] = glow_accel.scratchpad_alloc : memref<1x2x8x3xf32, 1 : i64>
// CHECK-NEXT:     %{{.*}} = glow_accel.dma_start %x[0, 0, 0, 3] -> %[[X1]][0, 0, 0, 0] sizes [1, 2, 8, 3]
// CHECK-NEXT:     glow_accel.dma_wait
// CHECK-NEXT:     glow_accel.conv @out %[[O1]], @in
// CHECK-NEXT:     glow_accel.elementwise @out %[[O1]], @in %[[O1]], @in %[[X1]] {kind = "element_add"}
// CHECK-NEXT:     glow_accel.elementwise @out %[[O1]], @in %[[O1]] {kind = "relu"}
// CHECK-NEXT:     %{{.*}} = glow_accel.dma_start %[[O1]][0, 0, 0, 0] -> %r[0, 0, 0, 3] sizes [1, 2, 8, 3]
// CHECK-NOT:      -> %r[
// CHECK:          %[[O2:.*]] = glow_accel.scratchpad_alloc : memref<1x2x8x2xf32, 1 : i64>
// CHECK-NEXT:     %[[X2:.*]] = glow_accel.scratchpad_alloc : memref<1x2x8x2xf32, 1 : i64>
// CHECK-NEXT:     %{{.*}} = glow_accel.dma_start %x[0, 0, 0, 6] -> %[[X2]][0, 0, 0, 0] sizes [1, 2, 8, 2]
// CHECK-NEXT:     glow_accel.dma_wait
// CHECK-NEXT:     glow_accel.conv @out %[[O2]], @in
// CHECK-NEXT:     glow_accel.elementwise @out %[[O2]], @in %[[O2]], @in %[[X2]] {kind = "element_add"}
// CHECK-NEXT:     glow_accel.elementwise @out %[[O2]], @in %[[O2]] {kind = "relu"}
// CHECK-NEXT:     %{{.*}} = glow_accel.dma_start %[[O2]][0, 0, 0, 0] -> %r[0, 0, 0, 6] sizes [1, 2, 8, 2]
// CHECK-NOT:      glow_accel.elementwise
// CHECK-NOT:      glow_ir.tensor_view
// CHECK-NOT:      -> %r[
// CHECK:        } attributes {{{.*}}, glow_accel.dma_lower_bound = 1176 : i64}
// With fuse-epilogues=false, the same function as three instructions: the whole output
// stored to %r, then the add and the relu each load and store %r (flat 1-D chunks).
// NOFUSE-LABEL: glow_ir.func @fuse_conv_residual
// NOFUSE:         glow_accel.conv @inout %[[O:[0-9]+]], @in
// NOFUSE-NOT:     glow_accel.elementwise
// NOFUSE:         glow_accel.dma_start %[[O]][0, 0, 0, 0] -> %r[0, 0, 0, 0] sizes [1, 2, 8, 8]
// NOFUSE:         %[[RF:.*]] = glow_ir.tensor_view %r[0, 0, 0, 0] : memref<1x2x8x8xf32> to memref<128xf32>
// NOFUSE:         glow_accel.dma_start %[[RF]][0] -> %{{.*}}[0] sizes [128]
// NOFUSE:         {kind = "element_add"} : memref<128xf32, 1 : i64>
// NOFUSE:         -> %[[RF]][0] sizes [128]
// NOFUSE:         %[[RF2:.*]] = glow_ir.tensor_view %r[0, 0, 0, 0] : memref<1x2x8x8xf32> to memref<128xf32>
// NOFUSE:         {kind = "relu"} : memref<128xf32, 1 : i64>
// NOFUSE-NEXT:    glow_accel.dma_start %{{.*}}[0] -> %[[RF2]][0] sizes [128]
// NOFUSE:       } attributes {{{.*}}, glow_accel.dma_lower_bound = 3736 : i64}
glow_ir.func @fuse_conv_residual declare {
  glow_ir.weight @x mutable input : memref<1x2x8x8xf32>
  glow_ir.weight @f constant input : memref<2x2x3x3xf32>
  glow_ir.weight @b constant input : memref<2xf32>
  glow_ir.weight @r mutable output : memref<1x2x8x8xf32>
} program(%x, %f, %b, %r) {
  glow_ir.convolution @out %r, @in %x, @in %f, @in %b {kernels = array<i64: 3, 3>, strides = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, dilation = array<i64: 1, 1>, group = 1 : i64} : memref<1x2x8x8xf32>, memref<1x2x8x8xf32>, memref<2x2x3x3xf32>, memref<2xf32>
  glow_ir.element_add @out %r, @in %r, @in %x : memref<1x2x8x8xf32>
  glow_ir.relu @out %r, @in %r : memref<1x2x8x8xf32>
} attributes {glow_accel.target = #glow_accel.target<scratchpad_bytes = 2048, dma_bytes_per_cycle = 32, dma_latency = 64, macs_per_cycle = 256, vector_width = 16, alignment = 64>}

// -----

// A linear layer: mat_mul, batched_add of the bias, relu. Output tiles of 32 columns,
// k in chunks; in each tile's last chunk step the bias slice of its columns is loaded
// (%bias[0], [32], [64], sizes [32]), added and rectified after the accumulate, and the
// tile is stored once.
// CHECK-LABEL:  glow_ir.func @fuse_matmul_bias_relu
// CHECK-NOT:      -> %y[
// CHECK:          %[[S0:.*]] = glow_accel.scratchpad_alloc : memref<32xf32, 1 : i64>
// CHECK-NEXT:     %{{.*}} = glow_accel.dma_start %bias[0] -> %[[S0]][0] sizes [32]
// CHECK-NEXT:     glow_accel.dma_wait
// CHECK-NEXT:     glow_accel.matmul @inout %[[C0:[0-9]+]], @in %{{.*}}, @in %{{.*}} {accumulate}
// CHECK-NEXT:     glow_accel.elementwise @out %[[C0]], @in %[[C0]], @in %[[S0]] {kind = "batched_add"} : memref<2x32xf32, 1 : i64>, memref<2x32xf32, 1 : i64>, memref<32xf32, 1 : i64>
// CHECK-NEXT:     glow_accel.elementwise @out %[[C0]], @in %[[C0]] {kind = "relu"} : memref<2x32xf32, 1 : i64>
// CHECK-NEXT:     %{{.*}} = glow_accel.dma_start %[[C0]][0, 0] -> %y[0, 0] sizes [2, 32]
// CHECK-NOT:      -> %y[
// CHECK:          %{{.*}} = glow_accel.dma_start %bias[32] -> %[[S1:[0-9]+]][0] sizes [32]
// CHECK-NEXT:     glow_accel.dma_wait
// CHECK-NEXT:     glow_accel.matmul @inout %[[C1:[0-9]+]], @in %{{.*}}, @in %{{.*}} {accumulate}
// CHECK-NEXT:     glow_accel.elementwise @out %[[C1]], @in %[[C1]], @in %[[S1]] {kind = "batched_add"}
// CHECK-NEXT:     glow_accel.elementwise @out %[[C1]], @in %[[C1]] {kind = "relu"}
// CHECK-NEXT:     %{{.*}} = glow_accel.dma_start %[[C1]][0, 0] -> %y[0, 32] sizes [2, 32]
// CHECK-NOT:      -> %y[
// CHECK:          %{{.*}} = glow_accel.dma_start %bias[64] -> %[[S2:[0-9]+]][0] sizes [32]
// CHECK:          glow_accel.elementwise @out %[[C2:[0-9]+]], @in %[[C2]], @in %[[S2]] {kind = "batched_add"}
// CHECK-NEXT:     glow_accel.elementwise @out %[[C2]], @in %[[C2]] {kind = "relu"}
// CHECK-NEXT:     %{{.*}} = glow_accel.dma_start %[[C2]][0, 0] -> %y[0, 64] sizes [2, 32]
// CHECK-NOT:      glow_accel.elementwise
// CHECK-NOT:      -> %y[
// CHECK:        } attributes
// NOFUSE-LABEL: glow_ir.func @fuse_matmul_bias_relu
// NOFUSE-NOT:     glow_accel.elementwise
// NOFUSE:         glow_accel.matmul
// NOFUSE-NOT:     glow_accel.elementwise
// NOFUSE:         -> %y[0, 84] sizes [2, 12]
// NOFUSE:         {kind = "batched_add"}
// NOFUSE:         {kind = "relu"}
glow_ir.func @fuse_matmul_bias_relu declare {
  glow_ir.weight @x mutable input : memref<2x16xf32>
  glow_ir.weight @w constant input : memref<16x96xf32>
  glow_ir.weight @bias constant input : memref<96xf32>
  glow_ir.weight @y mutable output : memref<2x96xf32>
} program(%x, %w, %bias, %y) {
  glow_ir.mat_mul @out %y, @in %x, @in %w : memref<2x96xf32>, memref<2x16xf32>, memref<16x96xf32>
  glow_ir.batched_add @out %y, @in %y, @in %bias : memref<2x96xf32>, memref<2x96xf32>, memref<96xf32>
  glow_ir.relu @out %y, @in %y : memref<2x96xf32>
} attributes {glow_accel.target = #glow_accel.target<scratchpad_bytes = 2048, dma_bytes_per_cycle = 32, dma_latency = 64, macs_per_cycle = 256, vector_width = 16, alignment = 64>}

// -----

// The chain's destination (%y) is not the producer's output: %t is dead after the
// element_mul (only the convolution, the element_mul and its dealloc use it), so it is
// never written at all; the running value is the element_mul's second source. The
// alloc and dealloc of %u between them do not stop the fusion (they stay where they are).
// The bound: x 512 + f 144 + b 8 + z 512 + y 512.
// CHECK-LABEL:  glow_ir.func @fuse_to_another_buffer
// CHECK:          %t = glow_ir.alloc_activation {offset = 0 : i64} : memref<1x2x8x8xf32>
// CHECK-NOT:      -> %t[
// CHECK:          glow_accel.dma_start %b[0] -> %{{.*}}[0] sizes [2]
// CHECK-NEXT:     glow_accel.dma_wait
// CHECK-NEXT:     %[[O0:.*]] = glow_accel.scratchpad_alloc : memref<1x2x8x8xf32, 1 : i64>
// CHECK-NEXT:     %[[Z0:.*]] = glow_accel.scratchpad_alloc : memref<1x2x8x8xf32, 1 : i64>
// CHECK-NEXT:     %{{.*}} = glow_accel.dma_start %z[0, 0, 0, 0] -> %[[Z0]][0, 0, 0, 0] sizes [1, 2, 8, 8]
// CHECK-NEXT:     glow_accel.dma_wait
// CHECK-NEXT:     glow_accel.conv @out %[[O0]], @in
// CHECK-NEXT:     glow_accel.elementwise @out %[[O0]], @in %[[Z0]], @in %[[O0]] {kind = "element_mul"}
// CHECK-NEXT:     %{{.*}} = glow_accel.dma_start %[[O0]][0, 0, 0, 0] -> %y[0, 0, 0, 0] sizes [1, 2, 8, 8]
// CHECK-NOT:      -> %t[
// CHECK-NOT:      glow_accel.elementwise
// CHECK:          %u = glow_ir.alloc_activation {offset = 512 : i64} : memref<2x4xf32>
// CHECK-NEXT:     glow_ir.dealloc_activation %u : memref<2x4xf32>
// CHECK-NEXT:     glow_ir.dealloc_activation %t : memref<1x2x8x8xf32>
// CHECK-NEXT:   } attributes {{{.*}}, glow_accel.dma_lower_bound = 1688 : i64}
// NOFUSE-LABEL: glow_ir.func @fuse_to_another_buffer
// NOFUSE:         -> %t[0, 0, 0, 0] sizes [1, 2, 8, 8]
// NOFUSE:         {kind = "element_mul"} : memref<128xf32, 1 : i64>
glow_ir.func @fuse_to_another_buffer declare {
  glow_ir.weight @x mutable input : memref<1x2x8x8xf32>
  glow_ir.weight @f constant input : memref<2x2x3x3xf32>
  glow_ir.weight @b constant input : memref<2xf32>
  glow_ir.weight @z mutable input : memref<1x2x8x8xf32>
  glow_ir.weight @y mutable output : memref<1x2x8x8xf32>
} program(%x, %f, %b, %z, %y) {
  %t = glow_ir.alloc_activation {offset = 0 : i64} : memref<1x2x8x8xf32>
  glow_ir.convolution @out %t, @in %x, @in %f, @in %b {kernels = array<i64: 3, 3>, strides = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, dilation = array<i64: 1, 1>, group = 1 : i64} : memref<1x2x8x8xf32>, memref<1x2x8x8xf32>, memref<2x2x3x3xf32>, memref<2xf32>
  %u = glow_ir.alloc_activation {offset = 512 : i64} : memref<2x4xf32>
  glow_ir.element_mul @out %y, @in %z, @in %t : memref<1x2x8x8xf32>
  glow_ir.dealloc_activation %u : memref<2x4xf32>
  glow_ir.dealloc_activation %t : memref<1x2x8x8xf32>
} attributes {glow_accel.target = #glow_accel.target<scratchpad_bytes = 4096, dma_bytes_per_cycle = 32, dma_latency = 64, macs_per_cycle = 256, vector_width = 16, alignment = 64>}

// -----

// No fusion when the producer's output is read again after the element-wise instruction
// that does not write it in place (%t is not dead after the relu): the convolution stores
// %t whole, and the relu and the add are steps of their own (flat chunks).
// CHECK-LABEL:  glow_ir.func @no_fusion_output_read_again
// CHECK:          glow_accel.conv @inout %[[O:[0-9]+]], @in
// CHECK-NEXT:     glow_accel.dma_start %[[O]][0, 0, 0, 0] -> %t[0, 0, 0, 0] sizes [1, 2, 8, 8]
// CHECK:          {kind = "relu"} : memref<128xf32, 1 : i64>
// CHECK:          {kind = "element_add"} : memref<128xf32, 1 : i64>
// CHECK:          glow_ir.dealloc_activation %t
glow_ir.func @no_fusion_output_read_again declare {
  glow_ir.weight @x mutable input : memref<1x2x8x8xf32>
  glow_ir.weight @f constant input : memref<2x2x3x3xf32>
  glow_ir.weight @b constant input : memref<2xf32>
  glow_ir.weight @y mutable output : memref<1x2x8x8xf32>
  glow_ir.weight @s mutable output : memref<1x2x8x8xf32>
} program(%x, %f, %b, %y, %s) {
  %t = glow_ir.alloc_activation {offset = 0 : i64} : memref<1x2x8x8xf32>
  glow_ir.convolution @out %t, @in %x, @in %f, @in %b {kernels = array<i64: 3, 3>, strides = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, dilation = array<i64: 1, 1>, group = 1 : i64} : memref<1x2x8x8xf32>, memref<1x2x8x8xf32>, memref<2x2x3x3xf32>, memref<2xf32>
  glow_ir.relu @out %y, @in %t : memref<1x2x8x8xf32>
  glow_ir.element_add @out %s, @in %t, @in %x : memref<1x2x8x8xf32>
  glow_ir.dealloc_activation %t : memref<1x2x8x8xf32>
} attributes {glow_accel.target = #glow_accel.target<scratchpad_bytes = 2048, dma_bytes_per_cycle = 32, dma_latency = 64, macs_per_cycle = 256, vector_width = 16, alignment = 64>}

// -----

// No fusion across another instruction (the copy between the convolution and the relu).
// CHECK-LABEL:  glow_ir.func @no_fusion_instruction_between
// CHECK:          glow_accel.conv @inout %[[O:[0-9]+]], @in
// CHECK-NEXT:     glow_accel.dma_start %[[O]][0, 0, 0, 0] -> %r[0, 0, 0, 0] sizes [1, 2, 8, 8]
// CHECK-NOT:      glow_accel.elementwise
// CHECK:          -> %{{.*}}[0] sizes [128] : memref<128xf32, 1 : i64> -> memref<128xf32>
// CHECK:          %[[RF:.*]] = glow_ir.tensor_view %r[0, 0, 0, 0] : memref<1x2x8x8xf32> to memref<128xf32>
// CHECK:          {kind = "relu"} : memref<128xf32, 1 : i64>
// CHECK-NEXT:     glow_accel.dma_start %{{.*}}[0] -> %[[RF]][0] sizes [128]
glow_ir.func @no_fusion_instruction_between declare {
  glow_ir.weight @x mutable input : memref<1x2x8x8xf32>
  glow_ir.weight @f constant input : memref<2x2x3x3xf32>
  glow_ir.weight @b constant input : memref<2xf32>
  glow_ir.weight @r mutable output : memref<1x2x8x8xf32>
  glow_ir.weight @s mutable output : memref<1x2x8x8xf32>
} program(%x, %f, %b, %r, %s) {
  glow_ir.convolution @out %r, @in %x, @in %f, @in %b {kernels = array<i64: 3, 3>, strides = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, dilation = array<i64: 1, 1>, group = 1 : i64} : memref<1x2x8x8xf32>, memref<1x2x8x8xf32>, memref<2x2x3x3xf32>, memref<2xf32>
  glow_ir.copy @out %s, @in %x : memref<1x2x8x8xf32>
  glow_ir.relu @out %r, @in %r : memref<1x2x8x8xf32>
} attributes {glow_accel.target = #glow_accel.target<scratchpad_bytes = 2048, dma_bytes_per_cycle = 32, dma_latency = 64, macs_per_cycle = 256, vector_width = 16, alignment = 64>}

// -----

// No fusion when the element-wise destination is read by the producer: the add writes
// the convolution's input %x, which later output tiles still read.
// CHECK-LABEL:  glow_ir.func @no_fusion_dest_read_by_producer
// CHECK:          glow_accel.conv @inout %[[O:[0-9]+]], @in
// CHECK-NEXT:     glow_accel.dma_start %[[O]][0, 0, 0, 0] -> %t[0, 0, 0, 0] sizes [1, 2, 8, 8]
// CHECK:          %[[XF:.*]] = glow_ir.tensor_view %x[0, 0, 0, 0] : memref<1x2x8x8xf32> to memref<128xf32>
// CHECK:          {kind = "element_add"} : memref<128xf32, 1 : i64>
// CHECK-NEXT:     glow_accel.dma_start %{{.*}}[0] -> %[[XF]][0] sizes [128]
glow_ir.func @no_fusion_dest_read_by_producer declare {
  glow_ir.weight @x mutable input : memref<1x2x8x8xf32>
  glow_ir.weight @f constant input : memref<2x2x3x3xf32>
  glow_ir.weight @b constant input : memref<2xf32>
  glow_ir.weight @z mutable input : memref<1x2x8x8xf32>
} program(%x, %f, %b, %z) {
  %t = glow_ir.alloc_activation {offset = 0 : i64} : memref<1x2x8x8xf32>
  glow_ir.convolution @out %t, @in %x, @in %f, @in %b {kernels = array<i64: 3, 3>, strides = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, dilation = array<i64: 1, 1>, group = 1 : i64} : memref<1x2x8x8xf32>, memref<1x2x8x8xf32>, memref<2x2x3x3xf32>, memref<2xf32>
  glow_ir.element_add @out %x, @in %t, @in %z : memref<1x2x8x8xf32>
  glow_ir.dealloc_activation %t : memref<1x2x8x8xf32>
} attributes {glow_accel.target = #glow_accel.target<scratchpad_bytes = 2048, dma_bytes_per_cycle = 32, dma_latency = 64, macs_per_cycle = 256, vector_width = 16, alignment = 64>}

// -----

// Kinds that are not an epilogue: a pool after a convolution, a copy, and a batched_add
// after a convolution (only a matmul's rows take a slice). Every convolution stores its
// whole output; the others are their own steps.
// CHECK-LABEL:  glow_ir.func @no_fusion_kinds
// CHECK:          glow_accel.conv @inout %[[O0:[0-9]+]], @in
// CHECK-NEXT:     glow_accel.dma_start %[[O0]][0, 0, 0, 0] -> %r[0, 0, 0, 0] sizes [1, 2, 8, 8]
// CHECK:          glow_accel.pool @out
// CHECK:          glow_accel.conv @inout %[[O1:[0-9]+]], @in
// CHECK-NEXT:     glow_accel.dma_start %[[O1]][0, 0, 0, 0] -> %r[0, 0, 0, 0] sizes [1, 2, 8, 8]
// CHECK-NOT:      glow_accel.conv
// CHECK:          -> %{{.*}}[0] sizes [128] : memref<128xf32, 1 : i64> -> memref<128xf32>
// CHECK:          glow_accel.conv @inout %[[O2:[0-9]+]], @in
// CHECK-NEXT:     glow_accel.dma_start %[[O2]][0, 0, 0, 0] -> %r[0, 0, 0, 0] sizes [1, 2, 8, 8]
// CHECK:          {kind = "batched_add"}
// CHECK-NOT:      glow_accel.conv
// CHECK:        } attributes
glow_ir.func @no_fusion_kinds declare {
  glow_ir.weight @x mutable input : memref<1x2x8x8xf32>
  glow_ir.weight @f constant input : memref<2x2x3x3xf32>
  glow_ir.weight @b constant input : memref<2xf32>
  glow_ir.weight @s mutable input : memref<2x8x8xf32>
  glow_ir.weight @r mutable output : memref<1x2x8x8xf32>
  glow_ir.weight @p mutable output : memref<1x2x4x4xf32>
  glow_ir.weight @c mutable output : memref<1x2x8x8xf32>
} program(%x, %f, %b, %s, %r, %p, %c) {
  glow_ir.convolution @out %r, @in %x, @in %f, @in %b {kernels = array<i64: 3, 3>, strides = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, dilation = array<i64: 1, 1>, group = 1 : i64} : memref<1x2x8x8xf32>, memref<1x2x8x8xf32>, memref<2x2x3x3xf32>, memref<2xf32>
  glow_ir.max_pool @out %p, @in %r {kernels = array<i64: 2, 2>, strides = array<i64: 2, 2>, pads = array<i64: 0, 0, 0, 0>} : memref<1x2x4x4xf32>, memref<1x2x8x8xf32>
  glow_ir.convolution @out %r, @in %x, @in %f, @in %b {kernels = array<i64: 3, 3>, strides = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, dilation = array<i64: 1, 1>, group = 1 : i64} : memref<1x2x8x8xf32>, memref<1x2x8x8xf32>, memref<2x2x3x3xf32>, memref<2xf32>
  glow_ir.copy @out %c, @in %r : memref<1x2x8x8xf32>
  glow_ir.convolution @out %r, @in %x, @in %f, @in %b {kernels = array<i64: 3, 3>, strides = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, dilation = array<i64: 1, 1>, group = 1 : i64} : memref<1x2x8x8xf32>, memref<1x2x8x8xf32>, memref<2x2x3x3xf32>, memref<2xf32>
  glow_ir.batched_add @out %r, @in %r, @in %s : memref<1x2x8x8xf32>, memref<1x2x8x8xf32>, memref<2x8x8xf32>
} attributes {glow_accel.target = #glow_accel.target<scratchpad_bytes = 2048, dma_bytes_per_cycle = 32, dma_latency = 64, macs_per_cycle = 256, vector_width = 16, alignment = 64>}

// -----

// No fusion when it would cost the DMA engine more than it saves: at 1 KiB, room for the
// residual tile would shrink the convolution to 6 steps (28 transfers); alone it takes 2
// (input channels accumulated), and the element_add is one 36-element step. With 2 KiB
// (the next chunk) the convolution fits one step either way, and the add is fused.
// CHECK-LABEL:  glow_ir.func @no_fusion_when_it_costs_more
// CHECK-COUNT-2:  glow_accel.conv
// CHECK-NEXT:     glow_accel.dma_start %{{.*}}[0, 0, 0, 0] -> %y[0, 0, 0, 0] sizes [1, 3, 2, 6]
// CHECK:          glow_accel.elementwise @out %[[S:[0-9]+]], @in %[[S]], @in %{{.*}} {kind = "element_add"} : memref<36xf32, 1 : i64>
// CHECK-LABEL:  glow_ir.func @fusion_when_it_pays
// CHECK:          glow_accel.conv @out %[[O:[0-9]+]], @in
// CHECK-NEXT:     glow_accel.elementwise @out %[[O]], @in %[[O]], @in %{{.*}} {kind = "element_add"} : memref<1x3x2x6xf32, 1 : i64>
// CHECK-NEXT:     glow_accel.dma_start %[[O]][0, 0, 0, 0] -> %y[0, 0, 0, 0] sizes [1, 3, 2, 6]
// CHECK-NOT:      glow_accel.elementwise
// CHECK:        } attributes
glow_ir.func @no_fusion_when_it_costs_more declare {
  glow_ir.weight @x mutable input : memref<1x2x4x8xf32>
  glow_ir.weight @f constant input : memref<3x2x3x3xf32>
  glow_ir.weight @b constant input : memref<3xf32>
  glow_ir.weight @e mutable input : memref<1x3x2x6xf32>
  glow_ir.weight @y mutable output : memref<1x3x2x6xf32>
} program(%x, %f, %b, %e, %y) {
  glow_ir.convolution @out %y, @in %x, @in %f, @in %b {kernels = array<i64: 3, 3>, strides = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, dilation = array<i64: 1, 1>, group = 1 : i64} : memref<1x3x2x6xf32>, memref<1x2x4x8xf32>, memref<3x2x3x3xf32>, memref<3xf32>
  glow_ir.element_add @out %y, @in %y, @in %e : memref<1x3x2x6xf32>
} attributes {glow_accel.target = #glow_accel.target<scratchpad_bytes = 1024, dma_bytes_per_cycle = 32, dma_latency = 64, macs_per_cycle = 256, vector_width = 16, alignment = 64>}

// -----

glow_ir.func @fusion_when_it_pays declare {
  glow_ir.weight @x mutable input : memref<1x2x4x8xf32>
  glow_ir.weight @f constant input : memref<3x2x3x3xf32>
  glow_ir.weight @b constant input : memref<3xf32>
  glow_ir.weight @e mutable input : memref<1x3x2x6xf32>
  glow_ir.weight @y mutable output : memref<1x3x2x6xf32>
} program(%x, %f, %b, %e, %y) {
  glow_ir.convolution @out %y, @in %x, @in %f, @in %b {kernels = array<i64: 3, 3>, strides = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, dilation = array<i64: 1, 1>, group = 1 : i64} : memref<1x3x2x6xf32>, memref<1x2x4x8xf32>, memref<3x2x3x3xf32>, memref<3xf32>
  glow_ir.element_add @out %y, @in %y, @in %e : memref<1x3x2x6xf32>
} attributes {glow_accel.target = #glow_accel.target<scratchpad_bytes = 2048, dma_bytes_per_cycle = 32, dma_latency = 64, macs_per_cycle = 256, vector_width = 16, alignment = 64>}

// -----

// A reduction to a scalar cannot be split into independent blocks: whole buffers, which
// do not fit 1 KiB.
glow_ir.func @too_big declare {
  glow_ir.weight @x mutable input : memref<64x64xf32>
  glow_ir.weight @y mutable output : memref<f32>
} program(%x, %y) {
  // expected-error @+1 {{'glow_ir.batched_reduce_add' op needs at least 32896 bytes of scratchpad for its smallest tile (its whole operands, which cannot be split: 16448 bytes, and a step may use half of the scratchpad); the scratchpad has 1024 bytes}}
  glow_ir.batched_reduce_add @out %y, @in %x {axes = array<i64: 0, 1>} : memref<f32>, memref<64x64xf32>
} attributes {glow_accel.target = #glow_accel.target<scratchpad_bytes = 1024, dma_bytes_per_cycle = 32, dma_latency = 64, macs_per_cycle = 256, vector_width = 16, alignment = 64>}

// -----

// Even the smallest matmul step (a 1x1 C tile and, for double buffering, two 1x1 tiles
// each of A and B, each taking 64 aligned bytes) needs 320 bytes of scratchpad.
glow_ir.func @tiny_scratchpad declare {
  glow_ir.weight @a mutable input : memref<4x8xf32>
  glow_ir.weight @b mutable input : memref<8x4xf32>
  glow_ir.weight @c mutable output : memref<4x4xf32>
} program(%a, %b, %c) {
  // expected-error @+1 {{'glow_ir.mat_mul' op needs at least 320 bytes of scratchpad for its smallest step (a 1x1 C tile and two 1x1 tiles each of A and B, each 64 aligned bytes); the scratchpad has 256 bytes}}
  glow_ir.mat_mul @out %c, @in %a, @in %b : memref<4x4xf32>, memref<4x8xf32>, memref<8x4xf32>
} attributes {glow_accel.target = #glow_accel.target<scratchpad_bytes = 256, dma_bytes_per_cycle = 32, dma_latency = 64, macs_per_cycle = 256, vector_width = 16, alignment = 64>}
