// Every verifier message of the glow_accel dialect and its parse errors, one per chunk,
// with MLIR's expected-error semantics.
//
// RUN: glow-opt %s --split-input-file --verify-diagnostics

// ===== scratchpad memory

glow_ir.func @alloc_not_scratchpad declare {
} program() {
  // expected-error @+1 {{scratchpad_alloc result must be a scratchpad tile (memref in memory space 1), got memref<4xf32>}}
  %t = glow_accel.scratchpad_alloc : memref<4xf32>
}

// -----

glow_ir.func @alloc_dynamic declare {
} program() {
  // expected-error @+1 {{must have a static shape}}
  %t = glow_accel.scratchpad_alloc : memref<?xf32, 1>
}

// -----

glow_ir.func @alloc_negative declare {
} program() {
  // expected-error @+1 {{scratchpad offset must be non-negative, got -64}}
  %t = glow_accel.scratchpad_alloc {offset = -64 : i64} : memref<4xf32, 1>
}

// -----

glow_ir.func @alloc_misaligned declare {
} program() {
  // expected-error @+1 {{scratchpad offset 32 is not a multiple of the target's alignment 64}}
  %t = glow_accel.scratchpad_alloc {offset = 32 : i64} : memref<4xf32, 1>
} attributes {glow_accel.target = #glow_accel.target<scratchpad_bytes = 1024, dma_bytes_per_cycle = 32, dma_latency = 64, macs_per_cycle = 256, vector_width = 16, alignment = 64>}

// -----

glow_ir.func @alloc_past_end declare {
} program() {
  // expected-error @+1 {{tile of 512 bytes at offset 768 ends 256 bytes past the 1024-byte scratchpad}}
  %t = glow_accel.scratchpad_alloc {offset = 768 : i64} : memref<128xf32, 1>
} attributes {glow_accel.target = #glow_accel.target<scratchpad_bytes = 1024, dma_bytes_per_cycle = 32, dma_latency = 64, macs_per_cycle = 256, vector_width = 16, alignment = 64>}

// -----

glow_ir.func @free_not_alloc declare {
  glow_ir.weight @x mutable input : memref<4xf32>
} program(%x) {
  %v = glow_ir.tensor_view %x[0] : memref<4xf32> to memref<4xf32>
  // expected-error @+1 {{scratchpad_free takes the result of a scratchpad_alloc}}
  "glow_accel.scratchpad_free"(%v) : (memref<4xf32>) -> ()
}

// ===== DMA

// -----

glow_ir.func @dma_both_scratchpad declare {
} program() {
  %a = glow_accel.scratchpad_alloc : memref<4xf32, 1>
  %b = glow_accel.scratchpad_alloc : memref<4xf32, 1>
  // expected-error @+1 {{dma_start moves between main memory and the scratchpad; both of its operands is in the scratchpad}}
  %k = glow_accel.dma_start %a[0] -> %b[0] sizes [4] : memref<4xf32, 1> -> memref<4xf32, 1>
}

// -----

glow_ir.func @dma_neither declare {
  glow_ir.weight @x mutable input : memref<4xf32>
  glow_ir.weight @y mutable output : memref<4xf32>
} program(%x, %y) {
  // expected-error @+1 {{neither of its operands is in the scratchpad}}
  %k = glow_accel.dma_start %x[0] -> %y[0] sizes [4] : memref<4xf32> -> memref<4xf32>
}

// -----

glow_ir.func @dma_types declare {
  glow_ir.weight @x mutable input : memref<4xi32>
} program(%x) {
  %a = glow_accel.scratchpad_alloc : memref<4xf32, 1>
  // expected-error @+1 {{dma_start element types differ: i32 and f32}}
  %k = glow_accel.dma_start %x[0] -> %a[0] sizes [4] : memref<4xi32> -> memref<4xf32, 1>
}

// -----

glow_ir.func @dma_sizes declare {
  glow_ir.weight @x mutable input : memref<4xf32>
} program(%x) {
  %a = glow_accel.scratchpad_alloc : memref<4xf32, 1>
  // expected-error @+1 {{dma_start sizes must be positive, got [0]}}
  %k = glow_accel.dma_start %x[0] -> %a[0] sizes [0] : memref<4xf32> -> memref<4xf32, 1>
}

// -----

glow_ir.func @dma_rank declare {
  glow_ir.weight @x mutable input : memref<2x4xf32>
} program(%x) {
  %a = glow_accel.scratchpad_alloc : memref<8xf32, 1>
  // expected-error @+1 {{dma_start source has rank 2, but 1 offsets and 1 sizes}}
  %k = glow_accel.dma_start %x[0] -> %a[0] sizes [8] : memref<2x4xf32> -> memref<8xf32, 1>
}

// -----

glow_ir.func @dma_outside declare {
  glow_ir.weight @x mutable input : memref<8x8xf32>
} program(%x) {
  %a = glow_accel.scratchpad_alloc : memref<4x4xf32, 1>
  // expected-error @+1 {{dma_start box [6, 0] + [4, 4] is outside the source memref<8x8xf32>}}
  %k = glow_accel.dma_start %x[6, 0] -> %a[0, 0] sizes [4, 4] : memref<8x8xf32> -> memref<4x4xf32, 1>
}

// -----

glow_ir.func @dma_to_constant declare {
  glow_ir.weight @w constant input : memref<4xf32>
} program(%w) {
  %a = glow_accel.scratchpad_alloc : memref<4xf32, 1>
  // expected-error @+1 {{dma_start writes to constant weight @w}}
  %k = glow_accel.dma_start %a[0] -> %w[0] sizes [4] : memref<4xf32, 1> -> memref<4xf32>
}

// -----

glow_ir.func @wait_nothing declare {
} program() {
  // expected-error @+1 {{dma_wait needs at least one token}}
  glow_accel.dma_wait
}

// ===== compute on tiles

// -----

glow_ir.func @compute_main_memory declare {
  glow_ir.weight @x mutable input : memref<4xf32>
} program(%x) {
  %a = glow_accel.scratchpad_alloc : memref<4xf32, 1>
  // expected-error @+1 {{operand #1 must be a scratchpad tile (memref in memory space 1), got memref<4xf32>}}
  glow_accel.elementwise @out %a, @in %x {kind = "relu"} : memref<4xf32, 1>, memref<4xf32>
}

// -----

glow_ir.func @compute_access declare {
} program() {
  %a = glow_accel.scratchpad_alloc : memref<4xf32, 1>
  // expected-error @+1 {{operand access must be @out for the destination and @in for the sources, got (@in, @in)}}
  glow_accel.elementwise @in %a, @in %a {kind = "relu"} : memref<4xf32, 1>
}

// -----

glow_ir.func @inout_without_accumulate declare {
} program() {
  %c = glow_accel.scratchpad_alloc : memref<2x2xf32, 1>
  // expected-error @+1 {{operand access must be @out for the destination and @in for the sources, got (@inout, @in, @in)}}
  glow_accel.matmul @inout %c, @in %c, @in %c : memref<2x2xf32, 1>
}

// -----

glow_ir.func @cannot_accumulate declare {
} program() {
  %a = glow_accel.scratchpad_alloc : memref<4xf32, 1>
  // expected-error @+1 {{glow_accel.elementwise cannot accumulate}}
  glow_accel.elementwise @inout %a, @in %a {kind = "relu", accumulate} : memref<4xf32, 1>
}

// -----

glow_ir.func @no_kind declare {
} program() {
  %a = glow_accel.scratchpad_alloc : memref<4xf32, 1>
  // expected-error @+1 {{glow_accel.elementwise needs a kind}}
  glow_accel.elementwise @out %a, @in %a : memref<4xf32, 1>
}

// -----

glow_ir.func @wrong_unit declare {
} program() {
  %a = glow_accel.scratchpad_alloc : memref<1x1x4x4xf32, 1>
  %b = glow_accel.scratchpad_alloc : memref<1x1x2x2xf32, 1>
  // expected-error @+1 {{glow_accel.elementwise kind must be one of}}
  glow_accel.elementwise @out %b, @in %a {kind = "max_pool", kernels = array<i64: 2, 2>, strides = array<i64: 2, 2>, pads = array<i64: 0, 0, 0, 0>} : memref<1x1x2x2xf32, 1>, memref<1x1x4x4xf32, 1>
}

// -----

glow_ir.func @matmul_shapes declare {
} program() {
  %c = glow_accel.scratchpad_alloc : memref<2x3xf32, 1>
  %a = glow_accel.scratchpad_alloc : memref<2x4xf32, 1>
  %b = glow_accel.scratchpad_alloc : memref<5x3xf32, 1>
  // expected-error @+1 {{'glow_accel.matmul' op lhs columns 4 must equal rhs rows 5}}
  glow_accel.matmul @out %c, @in %a, @in %b : memref<2x3xf32, 1>, memref<2x4xf32, 1>, memref<5x3xf32, 1>
}

// -----

glow_ir.func @conv_operands declare {
} program() {
  %o = glow_accel.scratchpad_alloc : memref<1x1x4x4xf32, 1>
  %i = glow_accel.scratchpad_alloc : memref<1x1x4x4xf32, 1>
  // expected-error @+1 {{glow_accel.conv takes output, input, filter and an optional bias, got 2 operands}}
  glow_accel.conv @out %o, @in %i {kernels = array<i64: 1, 1>} : memref<1x1x4x4xf32, 1>
}

// ===== the target attribute

// -----

// expected-error @+1 {{unknown #glow_accel.target field 'cache_bytes'}}
builtin.module attributes {glow_accel.target = #glow_accel.target<cache_bytes = 1>} {}

// -----

// expected-error @+1 {{#glow_accel.target misses dma_latency, macs_per_cycle, vector_width, alignment}}
builtin.module attributes {glow_accel.target = #glow_accel.target<scratchpad_bytes = 1024, dma_bytes_per_cycle = 32>} {}

// -----

// expected-error @+1 {{#glow_accel.target scratchpad_bytes must be positive, got 0}}
builtin.module attributes {glow_accel.target = #glow_accel.target<scratchpad_bytes = 0, dma_bytes_per_cycle = 32, dma_latency = 64, macs_per_cycle = 256, vector_width = 16, alignment = 64>} {}

// -----

// expected-error @+1 {{#glow_accel.target alignment must be a power of two, got 48}}
builtin.module attributes {glow_accel.target = #glow_accel.target<scratchpad_bytes = 1024, dma_bytes_per_cycle = 32, dma_latency = 64, macs_per_cycle = 256, vector_width = 16, alignment = 48>} {}
