// The last case must fail (exit status 1, an error at the tile naming the fix); the
// others are printed all the same, so every RUN line printing them expects the failure.
// RUN: not glow-opt %s --split-input-file --convert-glow-accel-to-llvm | FileCheck %s
// RUN: glow-opt %s --split-input-file --convert-glow-accel-to-llvm --verify-diagnostics
// RUN: glow-opt %s --split-input-file --convert-glow-accel-to-loops --verify-diagnostics

// A matmul tiled over two column chunks of b and c and two k chunks (the second
// accumulating). The entry point is Glow's three-pointer bundle API; the activation area
// grows: the planned 100 bytes rounded up to 128, the 1024-byte scratchpad (tiles at 128 +
// offset), then the accumulator (4x4 f32 at 1152), then the kernels' scratch (gemm's
// accumulation tile, 320 bytes at 1216): 1536 bytes. Each load and store is a call of a
// copy kernel (rows of 4 out of rows of 8: strided; the loads share one); each compute op
// a call of its tile kernel with byte views of its tiles: two kernels (plain,
// accumulating), each called twice. The accumulating kernel computes into the
// accumulator, then out += acc. Kernel functions have internal linkage.
// CHECK-LABEL: llvm.func internal @tiled_k0_dma(
// CHECK-LABEL: llvm.func internal @tiled_k1_mat_mul(
// CHECK-LABEL: llvm.func internal @tiled_k2_mat_mul(
// CHECK-LABEL: llvm.func internal @tiled_k3_dma(
// CHECK-LABEL: llvm.func @tiled(
// CHECK-SAME:      %constantWeight: !llvm.ptr {llvm.noalias}, %mutableWeight: !llvm.ptr {llvm.noalias}, %activations: !llvm.ptr {llvm.noalias}) -> i32
// CHECK-SAME:      glow.activations_size = 1536 : i64
// CHECK:         llvm.call @tiled_k1_mat_mul(
// CHECK:         llvm.mlir.constant(1152) : i64
// CHECK:         llvm.call @tiled_k2_mat_mul(
// CHECK-NOT:     memref
// CHECK-NOT:     scf.
// CHECK-NOT:     glow_accel
// CHECK:         llvm.return

// The store of the first column chunk: rows of 4 into rows of 8 of @c (at 384).
glow_ir.func @tiled declare {
  glow_ir.weight @a constant input : memref<4x8xf32>
  glow_ir.weight @b constant input : memref<8x8xf32>
  glow_ir.weight @c mutable output : memref<4x8xf32>
} program(%a, %b, %c) {
  %ta = glow_accel.scratchpad_alloc {offset = 0 : i64} : memref<4x4xf32, 1>
  %tb = glow_accel.scratchpad_alloc {offset = 64 : i64} : memref<4x4xf32, 1>
  %tc = glow_accel.scratchpad_alloc {offset = 128 : i64} : memref<4x4xf32, 1>
  %ka00 = glow_accel.dma_start %a[0, 0] -> %ta[0, 0] sizes [4, 4] : memref<4x8xf32> -> memref<4x4xf32, 1>
  %kb00 = glow_accel.dma_start %b[0, 0] -> %tb[0, 0] sizes [4, 4] : memref<8x8xf32> -> memref<4x4xf32, 1>
  glow_accel.dma_wait %ka00, %kb00
  glow_accel.matmul @out %tc, @in %ta, @in %tb : memref<4x4xf32, 1>, memref<4x4xf32, 1>, memref<4x4xf32, 1>
  %ka01 = glow_accel.dma_start %a[0, 4] -> %ta[0, 0] sizes [4, 4] : memref<4x8xf32> -> memref<4x4xf32, 1>
  %kb01 = glow_accel.dma_start %b[4, 0] -> %tb[0, 0] sizes [4, 4] : memref<8x8xf32> -> memref<4x4xf32, 1>
  glow_accel.dma_wait %ka01, %kb01
  glow_accel.matmul @inout %tc, @in %ta, @in %tb {accumulate} : memref<4x4xf32, 1>, memref<4x4xf32, 1>, memref<4x4xf32, 1>
  %kc0 = glow_accel.dma_start %tc[0, 0] -> %c[0, 0] sizes [4, 4] : memref<4x4xf32, 1> -> memref<4x8xf32>
  glow_accel.dma_wait %kc0
  %ka10 = glow_accel.dma_start %a[0, 0] -> %ta[0, 0] sizes [4, 4] : memref<4x8xf32> -> memref<4x4xf32, 1>
  %kb10 = glow_accel.dma_start %b[0, 4] -> %tb[0, 0] sizes [4, 4] : memref<8x8xf32> -> memref<4x4xf32, 1>
  glow_accel.dma_wait %ka10, %kb10
  glow_accel.matmul @out %tc, @in %ta, @in %tb : memref<4x4xf32, 1>, memref<4x4xf32, 1>, memref<4x4xf32, 1>
  %ka11 = glow_accel.dma_start %a[0, 4] -> %ta[0, 0] sizes [4, 4] : memref<4x8xf32> -> memref<4x4xf32, 1>
  %kb11 = glow_accel.dma_start %b[4, 4] -> %tb[0, 0] sizes [4, 4] : memref<8x8xf32> -> memref<4x4xf32, 1>
  glow_accel.dma_wait %ka11, %kb11
  glow_accel.matmul @inout %tc, @in %ta, @in %tb {accumulate} : memref<4x4xf32, 1>, memref<4x4xf32, 1>, memref<4x4xf32, 1>
  %kc1 = glow_accel.dma_start %tc[0, 0] -> %c[0, 4] sizes [4, 4] : memref<4x4xf32, 1> -> memref<4x8xf32>
  glow_accel.dma_wait %kc1
  glow_accel.scratchpad_free %ta : memref<4x4xf32, 1>
  glow_accel.scratchpad_free %tb : memref<4x4xf32, 1>
  glow_accel.scratchpad_free %tc : memref<4x4xf32, 1>
} attributes {activations_size = 100 : i64, alignment = 64 : i64, glow_accel.target = #glow_accel.target<scratchpad_bytes = 1024, dma_bytes_per_cycle = 32, dma_latency = 64, macs_per_cycle = 256, vector_width = 16, alignment = 64>}

// -----

// A convolution without bias reads a zero bias region after the scratchpad (at 256: no
// accumulator here), zeroed at entry, once per call; its fused relu stays in the kernel
// (it does not accumulate); the CPU kernels' scratch follows (320..704: im2col columns,
// gemm's accumulation tile).
// CHECK-LABEL: llvm.func internal @conv_without_bias_k2_convolution(
// CHECK-LABEL: llvm.func @conv_without_bias(
// CHECK-SAME:      glow.activations_size = 704 : i64
// CHECK:         llvm.call @conv_without_bias_k2_convolution(

glow_ir.func @conv_without_bias declare {
  glow_ir.weight @x constant input : memref<1x1x3x3xf32>
  glow_ir.weight @w constant input : memref<1x1x2x2xf32>
  glow_ir.weight @y mutable output : memref<1x1x2x2xf32>
} program(%x, %w, %y) {
  %tx = glow_accel.scratchpad_alloc {offset = 0 : i64} : memref<1x1x3x3xf32, 1>
  %tw = glow_accel.scratchpad_alloc {offset = 64 : i64} : memref<1x1x2x2xf32, 1>
  %to = glow_accel.scratchpad_alloc {offset = 128 : i64} : memref<1x1x2x2xf32, 1>
  %k0 = glow_accel.dma_start %x[0, 0, 0, 0] -> %tx[0, 0, 0, 0] sizes [1, 1, 3, 3] : memref<1x1x3x3xf32> -> memref<1x1x3x3xf32, 1>
  %k1 = glow_accel.dma_start %w[0, 0, 0, 0] -> %tw[0, 0, 0, 0] sizes [1, 1, 2, 2] : memref<1x1x2x2xf32> -> memref<1x1x2x2xf32, 1>
  glow_accel.dma_wait %k0, %k1
  glow_accel.conv @out %to, @in %tx, @in %tw {kernels = array<i64: 2, 2>, fused_activation = "relu"} : memref<1x1x2x2xf32, 1>, memref<1x1x3x3xf32, 1>, memref<1x1x2x2xf32, 1>
  %k2 = glow_accel.dma_start %to[0, 0, 0, 0] -> %y[0, 0, 0, 0] sizes [1, 1, 2, 2] : memref<1x1x2x2xf32, 1> -> memref<1x1x2x2xf32>
  glow_accel.dma_wait %k2
  glow_accel.scratchpad_free %tx : memref<1x1x3x3xf32, 1>
  glow_accel.scratchpad_free %tw : memref<1x1x2x2xf32, 1>
  glow_accel.scratchpad_free %to : memref<1x1x2x2xf32, 1>
} attributes {activations_size = 0 : i64, alignment = 64 : i64, glow_accel.target = #glow_accel.target<scratchpad_bytes = 256, dma_bytes_per_cycle = 32, dma_latency = 64, macs_per_cycle = 256, vector_width = 16, alignment = 64>}

// -----

// Must not lower: the scratchpad is not planned (no offset on a tile).
glow_ir.func @unplanned declare {
  glow_ir.weight @x constant input : memref<4xf32>
  glow_ir.weight @y mutable output : memref<4xf32>
} program(%x, %y) {
  // expected-error @+1 {{'glow_accel.scratchpad_alloc' op has no offset for its tile %t (memref<4xf32, 1 : i64>); run accel-plan-scratchpad first}}
  %t = glow_accel.scratchpad_alloc : memref<4xf32, 1>
  %k0 = glow_accel.dma_start %x[0] -> %t[0] sizes [4] : memref<4xf32> -> memref<4xf32, 1>
  glow_accel.dma_wait %k0
  glow_accel.elementwise @out %t, @in %t {kind = "relu"} : memref<4xf32, 1>, memref<4xf32, 1>
  %k1 = glow_accel.dma_start %t[0] -> %y[0] sizes [4] : memref<4xf32, 1> -> memref<4xf32>
  glow_accel.dma_wait %k1
  glow_accel.scratchpad_free %t : memref<4xf32, 1>
} attributes {activations_size = 0 : i64, alignment = 64 : i64, glow_accel.target = #glow_accel.target<scratchpad_bytes = 256, dma_bytes_per_cycle = 32, dma_latency = 64, macs_per_cycle = 256, vector_width = 16, alignment = 64>}
