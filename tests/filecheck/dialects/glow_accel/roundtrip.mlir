// Every op and attribute of the glow_accel dialect (glow_mlir.dialects.glow_accel.ALL_OPS:
// scratchpad_alloc with and without a planned offset, scratchpad_free, dma_start both ways
// with 1-D, 2-D and 4-D boxes, dma_wait on one and several tokens, and the compute ops
// matmul/conv (with and without bias, accumulating), pool, reduce, shuffle, elementwise;
// the target attribute on the module) round-trips through glow-opt in custom form and in
// generic form. Scratchpad tiles are memrefs in memory space 1.
//
// RUN: glow-opt %s | FileCheck %s
// RUN: glow-opt %s | glow-opt | FileCheck %s
// RUN: glow-opt %s --print-op-generic | glow-opt | FileCheck %s
// RUN: glow-opt %s --print-op-generic | FileCheck %s --check-prefix=GENERIC

// CHECK: builtin.module attributes {glow_accel.target = #glow_accel.target<scratchpad_bytes = 65536, dma_bytes_per_cycle = 32, dma_latency = 64, macs_per_cycle = 256, vector_width = 16, alignment = 64>} {
// CHECK-NEXT: glow_ir.func @main declare {
// CHECK-NEXT: glow_ir.weight @x mutable input : memref<1x2x6x6xf32>
// CHECK-NEXT: glow_ir.weight @w constant : memref<4x2x3x3xf32> = dense_resource<w> : tensor<4x2x3x3xf32>
// CHECK-NEXT: glow_ir.weight @b constant : memref<4xf32> = dense_resource<b> : tensor<4xf32>
// CHECK-NEXT: glow_ir.weight @y mutable output : memref<1x4x6x6xf32>
// CHECK-NEXT: } program(%x, %w, %b, %y) {
// CHECK-NEXT: %act = glow_ir.alloc_activation {offset = 0 : i64} : memref<1x4x6x6xf32>
// CHECK-NEXT: %in = glow_accel.scratchpad_alloc {offset = 0 : i64} : memref<1x1x6x6xf32, 1 : i64>
// CHECK-NEXT: %f = glow_accel.scratchpad_alloc {offset = 192 : i64} : memref<4x1x3x3xf32, 1 : i64>
// CHECK-NEXT: %bias = glow_accel.scratchpad_alloc : memref<4xf32, 1 : i64>
// CHECK-NEXT: %out = glow_accel.scratchpad_alloc : memref<1x4x6x6xf32, 1 : i64>
// CHECK-NEXT: %k0 = glow_accel.dma_start %x[0, 0, 0, 0] -> %in[0, 0, 0, 0] sizes [1, 1, 6, 6] : memref<1x2x6x6xf32> -> memref<1x1x6x6xf32, 1 : i64>
// CHECK-NEXT: %k1 = glow_accel.dma_start %w[0, 0, 0, 0] -> %f[0, 0, 0, 0] sizes [4, 1, 3, 3] : memref<4x2x3x3xf32> -> memref<4x1x3x3xf32, 1 : i64>
// CHECK-NEXT: %k2 = glow_accel.dma_start %b[0] -> %bias[0] sizes [4] : memref<4xf32> -> memref<4xf32, 1 : i64>
// CHECK-NEXT: glow_accel.dma_wait %k0, %k1, %k2
// CHECK-NEXT: glow_accel.conv @out %out, @in %in, @in %f, @in %bias {kernels = array<i64: 3, 3>, strides = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, dilation = array<i64: 1, 1>, group = 1 : i64} : memref<1x4x6x6xf32, 1 : i64>, memref<1x1x6x6xf32, 1 : i64>, memref<4x1x3x3xf32, 1 : i64>, memref<4xf32, 1 : i64>
// CHECK-NEXT: %k3 = glow_accel.dma_start %x[0, 1, 0, 0] -> %in[0, 0, 0, 0] sizes [1, 1, 6, 6] : memref<1x2x6x6xf32> -> memref<1x1x6x6xf32, 1 : i64>
// CHECK-NEXT: %k4 = glow_accel.dma_start %w[0, 1, 0, 0] -> %f[0, 0, 0, 0] sizes [4, 1, 3, 3] : memref<4x2x3x3xf32> -> memref<4x1x3x3xf32, 1 : i64>
// CHECK-NEXT: glow_accel.dma_wait %k3, %k4
// CHECK-NEXT: glow_accel.conv @inout %out, @in %in, @in %f {kernels = array<i64: 3, 3>, strides = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, dilation = array<i64: 1, 1>, group = 1 : i64, fused_activation = "relu", accumulate} : memref<1x4x6x6xf32, 1 : i64>, memref<1x1x6x6xf32, 1 : i64>, memref<4x1x3x3xf32, 1 : i64>
// CHECK-NEXT: %pooled = glow_accel.scratchpad_alloc : memref<1x4x3x3xf32, 1 : i64>
// CHECK-NEXT: glow_accel.pool @out %pooled, @in %out {kind = "max_pool", kernels = array<i64: 2, 2>, strides = array<i64: 2, 2>, pads = array<i64: 0, 0, 0, 0>} : memref<1x4x3x3xf32, 1 : i64>, memref<1x4x6x6xf32, 1 : i64>
// CHECK-NEXT: %sum = glow_accel.scratchpad_alloc : memref<4x3xf32, 1 : i64>
// CHECK-NEXT: %p2 = glow_ir.tensor_view %act[0, 0, 0, 0] : memref<1x4x6x6xf32> to memref<4x36xf32>
// CHECK-NEXT: %flat = glow_accel.scratchpad_alloc : memref<4x36xf32, 1 : i64>
// CHECK-NEXT: %t = glow_accel.scratchpad_alloc : memref<36x4xf32, 1 : i64>
// CHECK-NEXT: %r = glow_accel.scratchpad_alloc : memref<4xf32, 1 : i64>
// CHECK-NEXT: %m = glow_accel.scratchpad_alloc : memref<4x4xf32, 1 : i64>
// CHECK-NEXT: glow_accel.shuffle @out %flat {kind = "splat", value = 1.000000e+00 : f32} : memref<4x36xf32, 1 : i64>
// CHECK-NEXT: glow_accel.shuffle @out %t, @in %flat {kind = "transpose", shuffle = array<i64: 1, 0>} : memref<36x4xf32, 1 : i64>, memref<4x36xf32, 1 : i64>
// CHECK-NEXT: glow_accel.reduce @out %r, @in %flat {kind = "batched_reduce_add", axes = array<i64: 1>} : memref<4xf32, 1 : i64>, memref<4x36xf32, 1 : i64>
// CHECK-NEXT: glow_accel.matmul @out %m, @in %flat, @in %t : memref<4x4xf32, 1 : i64>, memref<4x36xf32, 1 : i64>, memref<36x4xf32, 1 : i64>
// CHECK-NEXT: glow_accel.matmul @inout %m, @in %flat, @in %t {accumulate} : memref<4x4xf32, 1 : i64>, memref<4x36xf32, 1 : i64>, memref<36x4xf32, 1 : i64>
// CHECK-NEXT: glow_accel.elementwise @out %out, @in %out, @in %out {kind = "element_add"} : memref<1x4x6x6xf32, 1 : i64>
// CHECK-NEXT: glow_accel.elementwise @out %m, @in %m, @in %r {kind = "batched_add"} : memref<4x4xf32, 1 : i64>, memref<4x4xf32, 1 : i64>, memref<4xf32, 1 : i64>
// CHECK-NEXT: %k5 = glow_accel.dma_start %out[0, 0, 0, 0] -> %y[0, 0, 0, 0] sizes [1, 4, 6, 6] : memref<1x4x6x6xf32, 1 : i64> -> memref<1x4x6x6xf32>
// CHECK-NEXT: %k6 = glow_accel.dma_start %flat[0, 0] -> %p2[0, 0] sizes [2, 36] : memref<4x36xf32, 1 : i64> -> memref<4x36xf32>
// CHECK-NEXT: glow_accel.dma_wait %k5
// CHECK-NEXT: glow_accel.dma_wait %k6
// CHECK-NEXT: glow_accel.scratchpad_free %in : memref<1x1x6x6xf32, 1 : i64>
// CHECK-NEXT: glow_accel.scratchpad_free %f : memref<4x1x3x3xf32, 1 : i64>
// CHECK-NEXT: glow_accel.scratchpad_free %bias : memref<4xf32, 1 : i64>
// CHECK-NEXT: glow_accel.scratchpad_free %out : memref<1x4x6x6xf32, 1 : i64>
// CHECK-NEXT: glow_accel.scratchpad_free %pooled : memref<1x4x3x3xf32, 1 : i64>
// CHECK-NEXT: glow_accel.scratchpad_free %sum : memref<4x3xf32, 1 : i64>
// CHECK-NEXT: glow_accel.scratchpad_free %flat : memref<4x36xf32, 1 : i64>
// CHECK-NEXT: glow_accel.scratchpad_free %t : memref<36x4xf32, 1 : i64>
// CHECK-NEXT: glow_accel.scratchpad_free %r : memref<4xf32, 1 : i64>
// CHECK-NEXT: glow_accel.scratchpad_free %m : memref<4x4xf32, 1 : i64>
// CHECK-NEXT: glow_ir.dealloc_activation %act : memref<1x4x6x6xf32>
// CHECK-NEXT: } attributes {activations_size = 576 : i64, alignment = 64 : i64}
// CHECK-NEXT: }

// GENERIC: "glow_accel.scratchpad_alloc"() {offset = 0 : i64} : () -> memref<1x1x6x6xf32, 1 : i64>
// GENERIC: "glow_accel.dma_start"(%{{.*}}, %{{.*}}) <{src_offsets = array<i64: 0, 0, 0, 0>, dst_offsets = array<i64: 0, 0, 0, 0>, sizes = array<i64: 1, 1, 6, 6>}> : (memref<1x2x6x6xf32>, memref<1x1x6x6xf32, 1 : i64>) -> !glow_accel.token
// GENERIC: "glow_accel.dma_wait"(%{{.*}}, %{{.*}}, %{{.*}}) : (!glow_accel.token, !glow_accel.token, !glow_accel.token) -> ()
// GENERIC: "glow_accel.conv"({{.*}}) <{access = ["inout", "in", "in"]}> {{.*}}accumulate

builtin.module attributes {glow_accel.target = #glow_accel.target<scratchpad_bytes = 65536, dma_bytes_per_cycle = 32, dma_latency = 64, macs_per_cycle = 256, vector_width = 16, alignment = 64>} {
  glow_ir.func @main declare {
    glow_ir.weight @x mutable input : memref<1x2x6x6xf32>
    glow_ir.weight @w constant : memref<4x2x3x3xf32> = dense_resource<w> : tensor<4x2x3x3xf32>
    glow_ir.weight @b constant : memref<4xf32> = dense_resource<b> : tensor<4xf32>
    glow_ir.weight @y mutable output : memref<1x4x6x6xf32>
  } program(%x, %w, %b, %y) {
    %act = glow_ir.alloc_activation {offset = 0 : i64} : memref<1x4x6x6xf32>
    %in = glow_accel.scratchpad_alloc {offset = 0 : i64} : memref<1x1x6x6xf32, 1>
    %f = glow_accel.scratchpad_alloc {offset = 192 : i64} : memref<4x1x3x3xf32, 1>
    %bias = glow_accel.scratchpad_alloc : memref<4xf32, 1>
    %out = glow_accel.scratchpad_alloc : memref<1x4x6x6xf32, 1>
    %k0 = glow_accel.dma_start %x[0, 0, 0, 0] -> %in[0, 0, 0, 0] sizes [1, 1, 6, 6] : memref<1x2x6x6xf32> -> memref<1x1x6x6xf32, 1>
    %k1 = glow_accel.dma_start %w[0, 0, 0, 0] -> %f[0, 0, 0, 0] sizes [4, 1, 3, 3] : memref<4x2x3x3xf32> -> memref<4x1x3x3xf32, 1>
    %k2 = glow_accel.dma_start %b[0] -> %bias[0] sizes [4] : memref<4xf32> -> memref<4xf32, 1>
    glow_accel.dma_wait %k0, %k1, %k2
    glow_accel.conv @out %out, @in %in, @in %f, @in %bias {kernels = array<i64: 3, 3>, strides = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, dilation = array<i64: 1, 1>, group = 1 : i64} : memref<1x4x6x6xf32, 1>, memref<1x1x6x6xf32, 1>, memref<4x1x3x3xf32, 1>, memref<4xf32, 1>
    %k3 = glow_accel.dma_start %x[0, 1, 0, 0] -> %in[0, 0, 0, 0] sizes [1, 1, 6, 6] : memref<1x2x6x6xf32> -> memref<1x1x6x6xf32, 1>
    %k4 = glow_accel.dma_start %w[0, 1, 0, 0] -> %f[0, 0, 0, 0] sizes [4, 1, 3, 3] : memref<4x2x3x3xf32> -> memref<4x1x3x3xf32, 1>
    glow_accel.dma_wait %k3, %k4
    glow_accel.conv @inout %out, @in %in, @in %f {kernels = array<i64: 3, 3>, strides = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, dilation = array<i64: 1, 1>, group = 1 : i64, fused_activation = "relu", accumulate} : memref<1x4x6x6xf32, 1>, memref<1x1x6x6xf32, 1>, memref<4x1x3x3xf32, 1>
    %pooled = glow_accel.scratchpad_alloc : memref<1x4x3x3xf32, 1>
    glow_accel.pool @out %pooled, @in %out {kind = "max_pool", kernels = array<i64: 2, 2>, strides = array<i64: 2, 2>, pads = array<i64: 0, 0, 0, 0>} : memref<1x4x3x3xf32, 1>, memref<1x4x6x6xf32, 1>
    %sum = glow_accel.scratchpad_alloc : memref<4x3xf32, 1>
    %p2 = glow_ir.tensor_view %act[0, 0, 0, 0] : memref<1x4x6x6xf32> to memref<4x36xf32>
    %flat = glow_accel.scratchpad_alloc : memref<4x36xf32, 1>
    %t = glow_accel.scratchpad_alloc : memref<36x4xf32, 1>
    %r = glow_accel.scratchpad_alloc : memref<4xf32, 1>
    %m = glow_accel.scratchpad_alloc : memref<4x4xf32, 1>
    glow_accel.shuffle @out %flat {kind = "splat", value = 1.000000e+00 : f32} : memref<4x36xf32, 1>
    glow_accel.shuffle @out %t, @in %flat {kind = "transpose", shuffle = array<i64: 1, 0>} : memref<36x4xf32, 1>, memref<4x36xf32, 1>
    glow_accel.reduce @out %r, @in %flat {kind = "batched_reduce_add", axes = array<i64: 1>} : memref<4xf32, 1>, memref<4x36xf32, 1>
    glow_accel.matmul @out %m, @in %flat, @in %t : memref<4x4xf32, 1>, memref<4x36xf32, 1>, memref<36x4xf32, 1>
    glow_accel.matmul @inout %m, @in %flat, @in %t {accumulate} : memref<4x4xf32, 1>, memref<4x36xf32, 1>, memref<36x4xf32, 1>
    glow_accel.elementwise @out %out, @in %out, @in %out {kind = "element_add"} : memref<1x4x6x6xf32, 1>
    glow_accel.elementwise @out %m, @in %m, @in %r {kind = "batched_add"} : memref<4x4xf32, 1>, memref<4x4xf32, 1>, memref<4xf32, 1>
    %k5 = glow_accel.dma_start %out[0, 0, 0, 0] -> %y[0, 0, 0, 0] sizes [1, 4, 6, 6] : memref<1x4x6x6xf32, 1> -> memref<1x4x6x6xf32>
    %k6 = glow_accel.dma_start %flat[0, 0] -> %p2[0, 0] sizes [2, 36] : memref<4x36xf32, 1> -> memref<4x36xf32>
    glow_accel.dma_wait %k5
    glow_accel.dma_wait %k6
    glow_accel.scratchpad_free %in : memref<1x1x6x6xf32, 1>
    glow_accel.scratchpad_free %f : memref<4x1x3x3xf32, 1>
    glow_accel.scratchpad_free %bias : memref<4xf32, 1>
    glow_accel.scratchpad_free %out : memref<1x4x6x6xf32, 1>
    glow_accel.scratchpad_free %pooled : memref<1x4x3x3xf32, 1>
    glow_accel.scratchpad_free %sum : memref<4x3xf32, 1>
    glow_accel.scratchpad_free %flat : memref<4x36xf32, 1>
    glow_accel.scratchpad_free %t : memref<36x4xf32, 1>
    glow_accel.scratchpad_free %r : memref<4xf32, 1>
    glow_accel.scratchpad_free %m : memref<4x4xf32, 1>
    glow_ir.dealloc_activation %act : memref<1x4x6x6xf32>
  } attributes {activations_size = 576 : i64, alignment = 64 : i64}
}

{-#
  dialect_resources: {
    builtin: {
      b: "0x040000000000003f0000803f0000c03f00000040",
      w: "0x040000000000003f0000803f0000c03f0000004000002040000040400000604000008040000090400000a0400000b0400000c0400000d0400000e0400000f0400000004100000841000010410000184100002041000028410000304100003841000040410000484100005041000058410000604100006841000070410000784100008041000084410000884100008c4100009041000094410000984100009c410000a0410000a4410000a8410000ac410000b0410000b4410000b8410000bc410000c0410000c4410000c8410000cc410000d0410000d4410000d8410000dc410000e0410000e4410000e8410000ec410000f0410000f4410000f8410000fc41000000420000024200000442000006420000084200000a4200000c4200000e4200001042"
    }
  }
#-}
