// Every op of glow_mlir.dialects.glow_ir.ALL_OPS round-trips through glow-opt in custom form
// and in generic form: the same CHECK lines hold for the output of one, two and
// generic-then-custom trips through the printer; GENERIC checks the generic form itself
// (the access kinds are a property, the weights' values dense_resource blobs).
// The first function is planned by hand (alloc offsets, views at offsets, a constant
// input, a symbol that is not an SSA name, a quantized output); the rest is
// dialects/glow/roundtrip.mlir through `lower-to-instr` (every instruction kind), checked
// line by line.
//
// RUN: glow-opt %s | FileCheck %s
// RUN: glow-opt %s | glow-opt | FileCheck %s
// RUN: glow-opt %s --print-op-generic | FileCheck %s --check-prefix=GENERIC
// RUN: glow-opt %s --print-op-generic | glow-opt | FileCheck %s
// RUN: glow-opt %s --print-op-generic | glow-opt --print-op-generic | FileCheck %s --check-prefix=GENERIC
// RUN: %python %S/../../inputs/op_coverage.py --dialect glow_ir %s CHECK
// RUN: %python %S/../../inputs/op_coverage.py --dialect glow_ir %s GENERIC

// GENERIC: "glow_ir.func"
// GENERIC: "glow_ir.weight"
// GENERIC: "glow_ir.alloc_activation"
// GENERIC: "glow_ir.copy"
// GENERIC: "glow_ir.tensor_view"
// GENERIC: "glow_ir.element_add"
// GENERIC: "glow_ir.quantize"
// GENERIC: "glow_ir.dealloc_activation"
// GENERIC: "glow_ir.splat"
// GENERIC: "glow_ir.insert_tensor"
// GENERIC: "glow_ir.extract_tensor"
// GENERIC: "glow_ir.transpose"
// GENERIC: "glow_ir.broadcast"
// GENERIC: "glow_ir.tile"
// GENERIC: "glow_ir.pad"
// GENERIC: "glow_ir.gather"
// GENERIC: "glow_ir.scatter_data"
// GENERIC: "glow_ir.batched_reduce_add"
// GENERIC: "glow_ir.batched_reduce_mean"
// GENERIC: "glow_ir.batched_reduce_max"
// GENERIC: "glow_ir.batched_reduce_min"
// GENERIC: "glow_ir.batched_reduce_prod"
// GENERIC: "glow_ir.arg_max"
// GENERIC: "glow_ir.arg_min"
// GENERIC: "glow_ir.top_k"
// GENERIC: "glow_ir.convolution"
// GENERIC: "glow_ir.max_pool"
// GENERIC: "glow_ir.max_pool_grad"
// GENERIC: "glow_ir.avg_pool"
// GENERIC: "glow_ir.adaptive_avg_pool"
// GENERIC: "glow_ir.batch_normalization"
// GENERIC: "glow_ir.local_response_normalization"
// GENERIC: "glow_ir.space_to_depth"
// GENERIC: "glow_ir.resize_nearest"
// GENERIC: "glow_ir.resize_bilinear"
// GENERIC: "glow_ir.fully_connected"
// GENERIC: "glow_ir.mat_mul"
// GENERIC: "glow_ir.batch_mat_mul"
// GENERIC: "glow_ir.batched_add"
// GENERIC: "glow_ir.layer_normalization"
// GENERIC: "glow_ir.soft_max"
// GENERIC: "glow_ir.log_soft_max"
// GENERIC: "glow_ir.relu"
// GENERIC: "glow_ir.sigmoid"
// GENERIC: "glow_ir.tanh"
// GENERIC: "glow_ir.gelu"
// GENERIC: "glow_ir.swish"
// GENERIC: "glow_ir.element_exp"
// GENERIC: "glow_ir.element_log"
// GENERIC: "glow_ir.element_sqrt"
// GENERIC: "glow_ir.element_rsqrt"
// GENERIC: "glow_ir.element_erf"
// GENERIC: "glow_ir.element_abs"
// GENERIC: "glow_ir.element_neg"
// GENERIC: "glow_ir.element_floor"
// GENERIC: "glow_ir.element_ceil"
// GENERIC: "glow_ir.element_round"
// GENERIC: "glow_ir.element_reciprocal"
// GENERIC: "glow_ir.element_sin"
// GENERIC: "glow_ir.element_cos"
// GENERIC: "glow_ir.element_not"
// GENERIC: "glow_ir.leaky_relu"
// GENERIC: "glow_ir.clip"
// GENERIC: "glow_ir.element_acos"
// GENERIC: "glow_ir.element_asin"
// GENERIC: "glow_ir.element_atan"
// GENERIC: "glow_ir.element_softsign"
// GENERIC: "glow_ir.element_sub"
// GENERIC: "glow_ir.element_mul"
// GENERIC: "glow_ir.element_div"
// GENERIC: "glow_ir.element_max"
// GENERIC: "glow_ir.element_min"
// GENERIC: "glow_ir.element_pow"
// GENERIC: "glow_ir.element_and"
// GENERIC: "glow_ir.element_or"
// GENERIC: "glow_ir.element_xor"
// GENERIC: "glow_ir.prelu"
// GENERIC: "glow_ir.element_cmp_eq"
// GENERIC: "glow_ir.element_cmp_lt"
// GENERIC: "glow_ir.element_cmp_lte"
// GENERIC: "glow_ir.element_select"
// GENERIC: "glow_ir.rescale_quantized"
// GENERIC: "glow_ir.dequantize"
// GENERIC: "glow_ir.convert_to"
// GENERIC: "glow_ir.roi_align"
// GENERIC: "glow_ir.non_zero"
// GENERIC: "glow_ir.non_max_suppression"
// GENERIC: "glow_ir.if"
// GENERIC: "glow_ir.loop"
// GENERIC: "glow_ir.channelwise_quantized_convolution"
// GENERIC: "glow_ir.rowwise_quantized_fully_connected"
// GENERIC: "glow_ir.int_lookup_table"

// CHECK-LABEL: glow_ir.func @planned declare {
// CHECK-NEXT: glow_ir.weight @"in:0" constant input : memref<2x8xf32>
// CHECK-NEXT: glow_ir.weight @out mutable output : memref<4x4xf32>
// CHECK-NEXT: glow_ir.weight @q mutable output : memref<16x!glow.quant<i8, scale = 0.5, offset = -3>>
// CHECK-NEXT: } program(%in, %out, %q) {
// CHECK-NEXT: %a = glow_ir.alloc_activation {offset = 0 : i64} : memref<2x8xf32>
// CHECK-NEXT: glow_ir.copy @out %a, @in %in : memref<2x8xf32>
// CHECK-NEXT: %row = glow_ir.tensor_view %a[1, 0] : memref<2x8xf32> to memref<8xf32>
// CHECK-NEXT: %b = glow_ir.alloc_activation {offset = 64 : i64} : memref<16xf32>
// CHECK-NEXT: %lo = glow_ir.tensor_view %b[0] : memref<16xf32> to memref<8xf32>
// CHECK-NEXT: glow_ir.element_add @out %lo, @in %row, @in %row : memref<8xf32>
// CHECK-NEXT: %hi = glow_ir.tensor_view %b[8] : memref<16xf32> to memref<8xf32>
// CHECK-NEXT: glow_ir.copy @out %hi, @in %row : memref<8xf32>
// CHECK-NEXT: %sq = glow_ir.tensor_view %b[0] : memref<16xf32> to memref<4x4xf32>
// CHECK-NEXT: glow_ir.copy @out %out, @in %sq : memref<4x4xf32>
// CHECK-NEXT: glow_ir.quantize @out %q, @in %b : memref<16x!glow.quant<i8, scale = 0.5, offset = -3>>, memref<16xf32>
// CHECK-NEXT: glow_ir.dealloc_activation %b : memref<16xf32>
// CHECK-NEXT: glow_ir.dealloc_activation %a : memref<2x8xf32>
// CHECK-NEXT: } attributes {activations_size = 128 : i64, alignment = 64 : i64}
glow_ir.func @planned declare {
  glow_ir.weight @"in:0" constant input : memref<2x8xf32>
  glow_ir.weight @out mutable output : memref<4x4xf32>
  glow_ir.weight @q mutable output : memref<16x!glow.quant<i8, scale = 0.5, offset = -3>>
} program(%in_0, %out, %q) {
  %a = glow_ir.alloc_activation {offset = 0 : i64} : memref<2x8xf32>
  glow_ir.copy @out %a, @in %in_0 : memref<2x8xf32>
  %row = glow_ir.tensor_view %a[1, 0] : memref<2x8xf32> to memref<8xf32>
  %b = glow_ir.alloc_activation {offset = 64 : i64} : memref<16xf32>
  %lo = glow_ir.tensor_view %b[0] : memref<16xf32> to memref<8xf32>
  glow_ir.element_add @out %lo, @in %row, @in %row : memref<8xf32>
  %hi = glow_ir.tensor_view %b[8] : memref<16xf32> to memref<8xf32>
  glow_ir.copy @out %hi, @in %row : memref<8xf32>
  %sq = glow_ir.tensor_view %b[0] : memref<16xf32> to memref<4x4xf32>
  glow_ir.copy @out %out, @in %sq : memref<4x4xf32>
  glow_ir.quantize @out %q, @in %b : memref<16x!glow.quant<i8, scale = 0.5, offset = -3>>, memref<16xf32>
  glow_ir.dealloc_activation %b : memref<16xf32>
  glow_ir.dealloc_activation %a : memref<2x8xf32>
} attributes {activations_size = 128 : i64, alignment = 64 : i64}

// CHECK-LABEL: glow_ir.func @empty declare {
// CHECK-NEXT: } program() {
// CHECK-NEXT: }
glow_ir.func @empty declare {
} program() {
}

// CHECK-LABEL: glow_ir.func @data declare {
// CHECK-NEXT: glow_ir.weight @input0 mutable input : memref<2x3x4xf32>
// CHECK-NEXT: glow_ir.weight @input1 mutable input : memref<2x5x4xf32>
// CHECK-NEXT: glow_ir.weight @input2 mutable input : memref<2x3xi32>
// CHECK-NEXT: glow_ir.weight @fc_weights constant : memref<4x3xf32> = dense_resource<fc_weights> : tensor<4x3xf32>
// CHECK-NEXT: glow_ir.weight @d constant : memref<2x2xf32> = dense_resource<d> : tensor<2x2xf32>
// CHECK-NEXT: glow_ir.weight @one constant : memref<8xi64> = dense_resource<one> : tensor<8xi64>
// CHECK-NEXT: } program(%input0, %input1, %input2, %fc_weights, %d, %one) {
// CHECK-NEXT: %z = glow_ir.alloc_activation : memref<2x3x4xf32>
// CHECK-NEXT: glow_ir.splat @out %z {value = 0.000000e+00 : f32} : memref<2x3x4xf32>
// CHECK-NEXT: %cat = glow_ir.alloc_activation : memref<2x11x4xf32>
// CHECK-NEXT: glow_ir.insert_tensor @inout %cat, @in %input0 {offsets = array<i64: 0, 0, 0>} : memref<2x11x4xf32>, memref<2x3x4xf32>
// CHECK-NEXT: glow_ir.insert_tensor @inout %cat, @in %input1 {offsets = array<i64: 0, 3, 0>} : memref<2x11x4xf32>, memref<2x5x4xf32>
// CHECK-NEXT: glow_ir.insert_tensor @inout %cat, @in %input0 {offsets = array<i64: 0, 8, 0>} : memref<2x11x4xf32>, memref<2x3x4xf32>
// CHECK-NEXT: %cat1 = glow_ir.alloc_activation : memref<2x3x4xf32>
// CHECK-NEXT: glow_ir.insert_tensor @inout %cat1, @in %input0 {offsets = array<i64: 0, 0, 0>} : memref<2x3x4xf32>
// CHECK-NEXT: %sl = glow_ir.alloc_activation : memref<2x3x2xf32>
// CHECK-NEXT: glow_ir.extract_tensor @out %sl, @in %cat {offsets = array<i64: 0, 2, 1>} : memref<2x3x2xf32>, memref<2x11x4xf32>
// CHECK-NEXT: %ins = glow_ir.alloc_activation : memref<2x11x4xf32>
// CHECK-NEXT: glow_ir.copy @out %ins, @in %cat : memref<2x11x4xf32>
// CHECK-NEXT: glow_ir.insert_tensor @inout %ins, @in %input0 {offsets = array<i64: 0, 1, 0>, count = 3 : i64, axis = 1 : i64} : memref<2x11x4xf32>, memref<2x3x4xf32>
// CHECK-NEXT: %r = glow_ir.tensor_view %input0[0, 0, 0] : memref<2x3x4xf32> to memref<6x4xf32>
// CHECK-NEXT: %t = glow_ir.alloc_activation : memref<4x2x3xf32>
// CHECK-NEXT: glow_ir.transpose @out %t, @in %input0 {shuffle = array<i64: 2, 0, 1>} : memref<4x2x3xf32>, memref<2x3x4xf32>
// CHECK-NEXT: %b = glow_ir.alloc_activation : memref<2x4x3xf32>
// CHECK-NEXT: glow_ir.broadcast @out %b, @in %fc_weights {axis = 1 : i64} : memref<2x4x3xf32>, memref<4x3xf32>
// CHECK-NEXT: %tl = glow_ir.alloc_activation : memref<4x3x4xf32>
// CHECK-NEXT: glow_ir.tile @out %tl, @in %input0 {count = 2 : i64, axis = 0 : i64} : memref<4x3x4xf32>, memref<2x3x4xf32>
// CHECK-NEXT: %p = glow_ir.alloc_activation : memref<2x5x8xf32>
// CHECK-NEXT: glow_ir.pad @out %p, @in %input0 {pads = array<i64: 0, 1, 2, 0, 1, 2>, mode = "reflect"} : memref<2x5x8xf32>, memref<2x3x4xf32>
// CHECK-NEXT: %p2 = glow_ir.alloc_activation : memref<2x3x6xf32>
// CHECK-NEXT: glow_ir.pad @out %p2, @in %input0 {pads = array<i64: 0, 0, 1, 0, 0, 1>, value = -1.000000e+00 : f32} : memref<2x3x6xf32>, memref<2x3x4xf32>
// CHECK-NEXT: %g = glow_ir.alloc_activation : memref<2x3x4xf32>
// CHECK-NEXT: glow_ir.gather @out %g, @in %r, @in %input2 {axis = 0 : i64} : memref<2x3x4xf32>, memref<6x4xf32>, memref<2x3xi32>
// CHECK-NEXT: %tv = glow_ir.tensor_view %t[0, 0, 0] : memref<4x2x3xf32> to memref<8x3xf32>
// CHECK-NEXT: %bv = glow_ir.tensor_view %b[0, 0, 0] : memref<2x4x3xf32> to memref<8x3xf32>
// CHECK-NEXT: %sc = glow_ir.alloc_activation : memref<8x3xf32>
// CHECK-NEXT: glow_ir.scatter_data @out %sc, @in %tv, @in %one, @in %bv {reduction = "add"} : memref<8x3xf32>, memref<8x3xf32>, memref<8xi64>, memref<8x3xf32>
// CHECK-NEXT: glow_ir.dealloc_activation %sc : memref<8x3xf32>
// CHECK-NEXT: glow_ir.dealloc_activation %g : memref<2x3x4xf32>
// CHECK-NEXT: glow_ir.dealloc_activation %p2 : memref<2x3x6xf32>
// CHECK-NEXT: glow_ir.dealloc_activation %p : memref<2x5x8xf32>
// CHECK-NEXT: glow_ir.dealloc_activation %tl : memref<4x3x4xf32>
// CHECK-NEXT: glow_ir.dealloc_activation %b : memref<2x4x3xf32>
// CHECK-NEXT: glow_ir.dealloc_activation %t : memref<4x2x3xf32>
// CHECK-NEXT: glow_ir.dealloc_activation %ins : memref<2x11x4xf32>
// CHECK-NEXT: glow_ir.dealloc_activation %sl : memref<2x3x2xf32>
// CHECK-NEXT: glow_ir.dealloc_activation %cat1 : memref<2x3x4xf32>
// CHECK-NEXT: glow_ir.dealloc_activation %cat : memref<2x11x4xf32>
// CHECK-NEXT: glow_ir.dealloc_activation %z : memref<2x3x4xf32>
// CHECK-NEXT: }
glow_ir.func @data declare {
  glow_ir.weight @input0 mutable input : memref<2x3x4xf32>
  glow_ir.weight @input1 mutable input : memref<2x5x4xf32>
  glow_ir.weight @input2 mutable input : memref<2x3xi32>
  glow_ir.weight @fc_weights constant : memref<4x3xf32> = dense_resource<fc_weights> : tensor<4x3xf32>
  glow_ir.weight @d constant : memref<2x2xf32> = dense_resource<d> : tensor<2x2xf32>
  glow_ir.weight @one constant : memref<8xi64> = dense_resource<one> : tensor<8xi64>
} program(%input0, %input1, %input2, %fc_weights, %d, %one) {
  %z = glow_ir.alloc_activation : memref<2x3x4xf32>
  glow_ir.splat @out %z {value = 0.000000e+00 : f32} : memref<2x3x4xf32>
  %cat = glow_ir.alloc_activation : memref<2x11x4xf32>
  glow_ir.insert_tensor @inout %cat, @in %input0 {offsets = array<i64: 0, 0, 0>} : memref<2x11x4xf32>, memref<2x3x4xf32>
  glow_ir.insert_tensor @inout %cat, @in %input1 {offsets = array<i64: 0, 3, 0>} : memref<2x11x4xf32>, memref<2x5x4xf32>
  glow_ir.insert_tensor @inout %cat, @in %input0 {offsets = array<i64: 0, 8, 0>} : memref<2x11x4xf32>, memref<2x3x4xf32>
  %cat1 = glow_ir.alloc_activation : memref<2x3x4xf32>
  glow_ir.insert_tensor @inout %cat1, @in %input0 {offsets = array<i64: 0, 0, 0>} : memref<2x3x4xf32>
  %sl = glow_ir.alloc_activation : memref<2x3x2xf32>
  glow_ir.extract_tensor @out %sl, @in %cat {offsets = array<i64: 0, 2, 1>} : memref<2x3x2xf32>, memref<2x11x4xf32>
  %ins = glow_ir.alloc_activation : memref<2x11x4xf32>
  glow_ir.copy @out %ins, @in %cat : memref<2x11x4xf32>
  glow_ir.insert_tensor @inout %ins, @in %input0 {offsets = array<i64: 0, 1, 0>, count = 3 : i64, axis = 1 : i64} : memref<2x11x4xf32>, memref<2x3x4xf32>
  %r = glow_ir.tensor_view %input0[0, 0, 0] : memref<2x3x4xf32> to memref<6x4xf32>
  %t = glow_ir.alloc_activation : memref<4x2x3xf32>
  glow_ir.transpose @out %t, @in %input0 {shuffle = array<i64: 2, 0, 1>} : memref<4x2x3xf32>, memref<2x3x4xf32>
  %b = glow_ir.alloc_activation : memref<2x4x3xf32>
  glow_ir.broadcast @out %b, @in %fc_weights {axis = 1 : i64} : memref<2x4x3xf32>, memref<4x3xf32>
  %tl = glow_ir.alloc_activation : memref<4x3x4xf32>
  glow_ir.tile @out %tl, @in %input0 {count = 2 : i64, axis = 0 : i64} : memref<4x3x4xf32>, memref<2x3x4xf32>
  %p = glow_ir.alloc_activation : memref<2x5x8xf32>
  glow_ir.pad @out %p, @in %input0 {pads = array<i64: 0, 1, 2, 0, 1, 2>, mode = "reflect"} : memref<2x5x8xf32>, memref<2x3x4xf32>
  %p2 = glow_ir.alloc_activation : memref<2x3x6xf32>
  glow_ir.pad @out %p2, @in %input0 {pads = array<i64: 0, 0, 1, 0, 0, 1>, value = -1.000000e+00 : f32} : memref<2x3x6xf32>, memref<2x3x4xf32>
  %g = glow_ir.alloc_activation : memref<2x3x4xf32>
  glow_ir.gather @out %g, @in %r, @in %input2 {axis = 0 : i64} : memref<2x3x4xf32>, memref<6x4xf32>, memref<2x3xi32>
  %tv = glow_ir.tensor_view %t[0, 0, 0] : memref<4x2x3xf32> to memref<8x3xf32>
  %bv = glow_ir.tensor_view %b[0, 0, 0] : memref<2x4x3xf32> to memref<8x3xf32>
  %sc = glow_ir.alloc_activation : memref<8x3xf32>
  glow_ir.scatter_data @out %sc, @in %tv, @in %one, @in %bv {reduction = "add"} : memref<8x3xf32>, memref<8x3xf32>, memref<8xi64>, memref<8x3xf32>
  glow_ir.dealloc_activation %sc : memref<8x3xf32>
  glow_ir.dealloc_activation %g : memref<2x3x4xf32>
  glow_ir.dealloc_activation %p2 : memref<2x3x6xf32>
  glow_ir.dealloc_activation %p : memref<2x5x8xf32>
  glow_ir.dealloc_activation %tl : memref<4x3x4xf32>
  glow_ir.dealloc_activation %b : memref<2x4x3xf32>
  glow_ir.dealloc_activation %t : memref<4x2x3xf32>
  glow_ir.dealloc_activation %ins : memref<2x11x4xf32>
  glow_ir.dealloc_activation %sl : memref<2x3x2xf32>
  glow_ir.dealloc_activation %cat1 : memref<2x3x4xf32>
  glow_ir.dealloc_activation %cat : memref<2x11x4xf32>
  glow_ir.dealloc_activation %z : memref<2x3x4xf32>
}

// CHECK-LABEL: glow_ir.func @reductions declare {
// CHECK-NEXT: glow_ir.weight @input0 mutable input : memref<8x16x32xf32>
// CHECK-NEXT: glow_ir.weight @input1 mutable input : memref<4x10xi32>
// CHECK-NEXT: glow_ir.weight @output0 mutable output : memref<8x16x5xf32>
// CHECK-NEXT: glow_ir.weight @output1 mutable output : memref<8x16x5xi64>
// CHECK-NEXT: } program(%input0, %input1, %output0, %output1) {
// CHECK-NEXT: %s = glow_ir.alloc_activation : memref<16x32xf32>
// CHECK-NEXT: glow_ir.batched_reduce_add @out %s, @in %input0 {axes = array<i64: 0>} : memref<16x32xf32>, memref<8x16x32xf32>
// CHECK-NEXT: %m = glow_ir.alloc_activation : memref<8xf32>
// CHECK-NEXT: glow_ir.batched_reduce_mean @out %m, @in %input0 {axes = array<i64: 1, 2>} : memref<8xf32>, memref<8x16x32xf32>
// CHECK-NEXT: %mx = glow_ir.alloc_activation : memref<8x16xf32>
// CHECK-NEXT: glow_ir.batched_reduce_max @out %mx, @in %input0 {axes = array<i64: -1>} : memref<8x16xf32>, memref<8x16x32xf32>
// CHECK-NEXT: %mn = glow_ir.alloc_activation : memref<4xi32>
// CHECK-NEXT: glow_ir.batched_reduce_min @out %mn, @in %input1 {axes = array<i64: 1>} : memref<4xi32>, memref<4x10xi32>
// CHECK-NEXT: %pr = glow_ir.alloc_activation : memref<10xi32>
// CHECK-NEXT: glow_ir.batched_reduce_prod @out %pr, @in %input1 {axes = array<i64: 0>} : memref<10xi32>, memref<4x10xi32>
// CHECK-NEXT: %am = glow_ir.alloc_activation : memref<8x16x1xi64>
// CHECK-NEXT: glow_ir.arg_max @out %am, @in %input0 {axis = 2 : i64} : memref<8x16x1xi64>, memref<8x16x32xf32>
// CHECK-NEXT: %an = glow_ir.alloc_activation : memref<8x32xi32>
// CHECK-NEXT: glow_ir.arg_min @out %an, @in %input0 {axis = 1 : i64, keep_dims = false} : memref<8x32xi32>, memref<8x16x32xf32>
// CHECK-NEXT: glow_ir.top_k @out %output0, @out %output1, @in %input0 {k = 5 : i64} : memref<8x16x5xf32>, memref<8x16x5xi64>, memref<8x16x32xf32>
// CHECK-NEXT: glow_ir.dealloc_activation %an : memref<8x32xi32>
// CHECK-NEXT: glow_ir.dealloc_activation %am : memref<8x16x1xi64>
// CHECK-NEXT: glow_ir.dealloc_activation %pr : memref<10xi32>
// CHECK-NEXT: glow_ir.dealloc_activation %mn : memref<4xi32>
// CHECK-NEXT: glow_ir.dealloc_activation %mx : memref<8x16xf32>
// CHECK-NEXT: glow_ir.dealloc_activation %m : memref<8xf32>
// CHECK-NEXT: glow_ir.dealloc_activation %s : memref<16x32xf32>
// CHECK-NEXT: }
glow_ir.func @reductions declare {
  glow_ir.weight @input0 mutable input : memref<8x16x32xf32>
  glow_ir.weight @input1 mutable input : memref<4x10xi32>
  glow_ir.weight @output0 mutable output : memref<8x16x5xf32>
  glow_ir.weight @output1 mutable output : memref<8x16x5xi64>
} program(%input0, %input1, %output0, %output1) {
  %s = glow_ir.alloc_activation : memref<16x32xf32>
  glow_ir.batched_reduce_add @out %s, @in %input0 {axes = array<i64: 0>} : memref<16x32xf32>, memref<8x16x32xf32>
  %m = glow_ir.alloc_activation : memref<8xf32>
  glow_ir.batched_reduce_mean @out %m, @in %input0 {axes = array<i64: 1, 2>} : memref<8xf32>, memref<8x16x32xf32>
  %mx = glow_ir.alloc_activation : memref<8x16xf32>
  glow_ir.batched_reduce_max @out %mx, @in %input0 {axes = array<i64: -1>} : memref<8x16xf32>, memref<8x16x32xf32>
  %mn = glow_ir.alloc_activation : memref<4xi32>
  glow_ir.batched_reduce_min @out %mn, @in %input1 {axes = array<i64: 1>} : memref<4xi32>, memref<4x10xi32>
  %pr = glow_ir.alloc_activation : memref<10xi32>
  glow_ir.batched_reduce_prod @out %pr, @in %input1 {axes = array<i64: 0>} : memref<10xi32>, memref<4x10xi32>
  %am = glow_ir.alloc_activation : memref<8x16x1xi64>
  glow_ir.arg_max @out %am, @in %input0 {axis = 2 : i64} : memref<8x16x1xi64>, memref<8x16x32xf32>
  %an = glow_ir.alloc_activation : memref<8x32xi32>
  glow_ir.arg_min @out %an, @in %input0 {axis = 1 : i64, keep_dims = false} : memref<8x32xi32>, memref<8x16x32xf32>
  glow_ir.top_k @out %output0, @out %output1, @in %input0 {k = 5 : i64} : memref<8x16x5xf32>, memref<8x16x5xi64>, memref<8x16x32xf32>
  glow_ir.dealloc_activation %an : memref<8x32xi32>
  glow_ir.dealloc_activation %am : memref<8x16x1xi64>
  glow_ir.dealloc_activation %pr : memref<10xi32>
  glow_ir.dealloc_activation %mn : memref<4xi32>
  glow_ir.dealloc_activation %mx : memref<8x16xf32>
  glow_ir.dealloc_activation %m : memref<8xf32>
  glow_ir.dealloc_activation %s : memref<16x32xf32>
}

// CHECK-LABEL: glow_ir.func @cnn declare {
// CHECK-NEXT: glow_ir.weight @input0 mutable input : memref<1x3x224x224xf32>
// CHECK-NEXT: glow_ir.weight @input1 mutable input : memref<64x3x7x7xf32>
// CHECK-NEXT: glow_ir.weight @input2 mutable input : memref<64xf32>
// CHECK-NEXT: glow_ir.weight @input3 mutable input : memref<64x1x3x3xf32>
// CHECK-NEXT: glow_ir.weight @input4 mutable input : memref<1x56x56x64xf32>
// CHECK-NEXT: glow_ir.weight @input5 mutable input : memref<32x1x1x64xf32>
// CHECK-NEXT: glow_ir.weight @input6 mutable input : memref<32xf32>
// CHECK-NEXT: glow_ir.weight @output0 mutable output : memref<1x64x1x1xf32>
// CHECK-NEXT: } program(%input0, %input1, %input2, %input3, %input4, %input5, %input6, %output0) {
// CHECK-NEXT: %c = glow_ir.alloc_activation : memref<1x64x112x112xf32>
// CHECK-NEXT: glow_ir.convolution @out %c, @in %input0, @in %input1, @in %input2 {kernels = array<i64: 7, 7>, strides = array<i64: 2, 2>, pads = array<i64: 3, 3, 3, 3>, fused_activation = "relu"} : memref<1x64x112x112xf32>, memref<1x3x224x224xf32>, memref<64x3x7x7xf32>, memref<64xf32>
// CHECK-NEXT: %mp = glow_ir.alloc_activation : memref<1x64x56x56xf32>
// CHECK-NEXT: glow_ir.max_pool @out %mp, @in %c {kernels = array<i64: 3, 3>, strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>} : memref<1x64x56x56xf32>, memref<1x64x112x112xf32>
// CHECK-NEXT: %mpg = glow_ir.alloc_activation : memref<1x64x112x112xf32>
// CHECK-NEXT: glow_ir.max_pool_grad @out %mpg, @in %c, @in %mp {kernels = array<i64: 3, 3>, strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>} : memref<1x64x112x112xf32>, memref<1x64x112x112xf32>, memref<1x64x56x56xf32>
// CHECK-NEXT: glow_ir.dealloc_activation %mpg : memref<1x64x112x112xf32>
// CHECK-NEXT: %dwc = glow_ir.alloc_activation : memref<1x64x56x56xf32>
// CHECK-NEXT: glow_ir.convolution @out %dwc, @in %mp, @in %input3, @in %input2 {kernels = array<i64: 3, 3>, pads = array<i64: 2, 2, 2, 2>, dilation = array<i64: 2, 2>, group = 64 : i64, fused_activation = "clip", fused_activation_args = array<f32: 0.000000e+00, 6.000000e+00>} : memref<1x64x56x56xf32>, memref<1x64x56x56xf32>, memref<64x1x3x3xf32>, memref<64xf32>
// CHECK-NEXT: %ap = glow_ir.alloc_activation : memref<1x64x28x28xf32>
// CHECK-NEXT: glow_ir.avg_pool @out %ap, @in %dwc {kernels = array<i64: 2, 2>, strides = array<i64: 2, 2>, count_include_pad = true} : memref<1x64x28x28xf32>, memref<1x64x56x56xf32>
// CHECK-NEXT: glow_ir.adaptive_avg_pool @out %output0, @in %ap : memref<1x64x1x1xf32>, memref<1x64x28x28xf32>
// CHECK-NEXT: %bn = glow_ir.alloc_activation : memref<1x64x56x56xf32>
// CHECK-NEXT: glow_ir.batch_normalization @out %bn, @in %mp, @in %input2, @in %input2, @in %input2, @in %input2 {epsilon = 1.000000e-05 : f32, momentum = 9.000000e-01 : f32} : memref<1x64x56x56xf32>, memref<1x64x56x56xf32>, memref<64xf32>, memref<64xf32>, memref<64xf32>, memref<64xf32>
// CHECK-NEXT: %lrn = glow_ir.alloc_activation : memref<1x64x56x56xf32>
// CHECK-NEXT: glow_ir.local_response_normalization @out %lrn, @in %mp {half_window_size = 2 : i64, alpha = 1.000000e-04 : f32, beta = 7.500000e-01 : f32, k = 2.000000e+00 : f32} : memref<1x64x56x56xf32>
// CHECK-NEXT: %s2d = glow_ir.alloc_activation : memref<1x256x28x28xf32>
// CHECK-NEXT: glow_ir.space_to_depth @out %s2d, @in %mp {block_size = 2 : i64} : memref<1x256x28x28xf32>, memref<1x64x56x56xf32>
// CHECK-NEXT: %rn = glow_ir.alloc_activation : memref<1x64x112x112xf32>
// CHECK-NEXT: glow_ir.resize_nearest @out %rn, @in %mp {scale = array<f32: 1.000000e+00, 1.000000e+00, 2.000000e+00, 2.000000e+00>, coordinate_transformation_mode = "half_pixel", nearest_mode = "round_prefer_ceil"} : memref<1x64x112x112xf32>, memref<1x64x56x56xf32>
// CHECK-NEXT: %rb = glow_ir.alloc_activation : memref<1x64x28x28xf32>
// CHECK-NEXT: glow_ir.resize_bilinear @out %rb, @in %mp {scale = array<f32: 1.000000e+00, 1.000000e+00, 5.000000e-01, 5.000000e-01>} : memref<1x64x28x28xf32>, memref<1x64x56x56xf32>
// CHECK-NEXT: %nc = glow_ir.alloc_activation : memref<1x56x56x32xf32>
// CHECK-NEXT: glow_ir.convolution @out %nc, @in %input4, @in %input5, @in %input6 {kernels = array<i64: 1, 1>, layout = "NHWC"} : memref<1x56x56x32xf32>, memref<1x56x56x64xf32>, memref<32x1x1x64xf32>, memref<32xf32>
// CHECK-NEXT: %np = glow_ir.alloc_activation : memref<1x28x28x32xf32>
// CHECK-NEXT: glow_ir.max_pool @out %np, @in %nc {kernels = array<i64: 2, 2>, strides = array<i64: 2, 2>, layout = "NHWC"} : memref<1x28x28x32xf32>, memref<1x56x56x32xf32>
// CHECK-NEXT: glow_ir.dealloc_activation %np : memref<1x28x28x32xf32>
// CHECK-NEXT: glow_ir.dealloc_activation %nc : memref<1x56x56x32xf32>
// CHECK-NEXT: glow_ir.dealloc_activation %rb : memref<1x64x28x28xf32>
// CHECK-NEXT: glow_ir.dealloc_activation %rn : memref<1x64x112x112xf32>
// CHECK-NEXT: glow_ir.dealloc_activation %s2d : memref<1x256x28x28xf32>
// CHECK-NEXT: glow_ir.dealloc_activation %lrn : memref<1x64x56x56xf32>
// CHECK-NEXT: glow_ir.dealloc_activation %bn : memref<1x64x56x56xf32>
// CHECK-NEXT: glow_ir.dealloc_activation %ap : memref<1x64x28x28xf32>
// CHECK-NEXT: glow_ir.dealloc_activation %dwc : memref<1x64x56x56xf32>
// CHECK-NEXT: glow_ir.dealloc_activation %mp : memref<1x64x56x56xf32>
// CHECK-NEXT: glow_ir.dealloc_activation %c : memref<1x64x112x112xf32>
// CHECK-NEXT: }
glow_ir.func @cnn declare {
  glow_ir.weight @input0 mutable input : memref<1x3x224x224xf32>
  glow_ir.weight @input1 mutable input : memref<64x3x7x7xf32>
  glow_ir.weight @input2 mutable input : memref<64xf32>
  glow_ir.weight @input3 mutable input : memref<64x1x3x3xf32>
  glow_ir.weight @input4 mutable input : memref<1x56x56x64xf32>
  glow_ir.weight @input5 mutable input : memref<32x1x1x64xf32>
  glow_ir.weight @input6 mutable input : memref<32xf32>
  glow_ir.weight @output0 mutable output : memref<1x64x1x1xf32>
} program(%input0, %input1, %input2, %input3, %input4, %input5, %input6, %output0) {
  %c = glow_ir.alloc_activation : memref<1x64x112x112xf32>
  glow_ir.convolution @out %c, @in %input0, @in %input1, @in %input2 {kernels = array<i64: 7, 7>, strides = array<i64: 2, 2>, pads = array<i64: 3, 3, 3, 3>, fused_activation = "relu"} : memref<1x64x112x112xf32>, memref<1x3x224x224xf32>, memref<64x3x7x7xf32>, memref<64xf32>
  %mp = glow_ir.alloc_activation : memref<1x64x56x56xf32>
  glow_ir.max_pool @out %mp, @in %c {kernels = array<i64: 3, 3>, strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>} : memref<1x64x56x56xf32>, memref<1x64x112x112xf32>
  %mpg = glow_ir.alloc_activation : memref<1x64x112x112xf32>
  glow_ir.max_pool_grad @out %mpg, @in %c, @in %mp {kernels = array<i64: 3, 3>, strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>} : memref<1x64x112x112xf32>, memref<1x64x112x112xf32>, memref<1x64x56x56xf32>
  glow_ir.dealloc_activation %mpg : memref<1x64x112x112xf32>
  %dwc = glow_ir.alloc_activation : memref<1x64x56x56xf32>
  glow_ir.convolution @out %dwc, @in %mp, @in %input3, @in %input2 {kernels = array<i64: 3, 3>, pads = array<i64: 2, 2, 2, 2>, dilation = array<i64: 2, 2>, group = 64 : i64, fused_activation = "clip", fused_activation_args = array<f32: 0.000000e+00, 6.000000e+00>} : memref<1x64x56x56xf32>, memref<1x64x56x56xf32>, memref<64x1x3x3xf32>, memref<64xf32>
  %ap = glow_ir.alloc_activation : memref<1x64x28x28xf32>
  glow_ir.avg_pool @out %ap, @in %dwc {kernels = array<i64: 2, 2>, strides = array<i64: 2, 2>, count_include_pad = true} : memref<1x64x28x28xf32>, memref<1x64x56x56xf32>
  glow_ir.adaptive_avg_pool @out %output0, @in %ap : memref<1x64x1x1xf32>, memref<1x64x28x28xf32>
  %bn = glow_ir.alloc_activation : memref<1x64x56x56xf32>
  glow_ir.batch_normalization @out %bn, @in %mp, @in %input2, @in %input2, @in %input2, @in %input2 {epsilon = 1.000000e-05 : f32, momentum = 9.000000e-01 : f32} : memref<1x64x56x56xf32>, memref<1x64x56x56xf32>, memref<64xf32>, memref<64xf32>, memref<64xf32>, memref<64xf32>
  %lrn = glow_ir.alloc_activation : memref<1x64x56x56xf32>
  glow_ir.local_response_normalization @out %lrn, @in %mp {half_window_size = 2 : i64, alpha = 1.000000e-04 : f32, beta = 7.500000e-01 : f32, k = 2.000000e+00 : f32} : memref<1x64x56x56xf32>
  %s2d = glow_ir.alloc_activation : memref<1x256x28x28xf32>
  glow_ir.space_to_depth @out %s2d, @in %mp {block_size = 2 : i64} : memref<1x256x28x28xf32>, memref<1x64x56x56xf32>
  %rn = glow_ir.alloc_activation : memref<1x64x112x112xf32>
  glow_ir.resize_nearest @out %rn, @in %mp {scale = array<f32: 1.000000e+00, 1.000000e+00, 2.000000e+00, 2.000000e+00>, coordinate_transformation_mode = "half_pixel", nearest_mode = "round_prefer_ceil"} : memref<1x64x112x112xf32>, memref<1x64x56x56xf32>
  %rb = glow_ir.alloc_activation : memref<1x64x28x28xf32>
  glow_ir.resize_bilinear @out %rb, @in %mp {scale = array<f32: 1.000000e+00, 1.000000e+00, 5.000000e-01, 5.000000e-01>} : memref<1x64x28x28xf32>, memref<1x64x56x56xf32>
  %nc = glow_ir.alloc_activation : memref<1x56x56x32xf32>
  glow_ir.convolution @out %nc, @in %input4, @in %input5, @in %input6 {kernels = array<i64: 1, 1>, layout = "NHWC"} : memref<1x56x56x32xf32>, memref<1x56x56x64xf32>, memref<32x1x1x64xf32>, memref<32xf32>
  %np = glow_ir.alloc_activation : memref<1x28x28x32xf32>
  glow_ir.max_pool @out %np, @in %nc {kernels = array<i64: 2, 2>, strides = array<i64: 2, 2>, layout = "NHWC"} : memref<1x28x28x32xf32>, memref<1x56x56x32xf32>
  glow_ir.dealloc_activation %np : memref<1x28x28x32xf32>
  glow_ir.dealloc_activation %nc : memref<1x56x56x32xf32>
  glow_ir.dealloc_activation %rb : memref<1x64x28x28xf32>
  glow_ir.dealloc_activation %rn : memref<1x64x112x112xf32>
  glow_ir.dealloc_activation %s2d : memref<1x256x28x28xf32>
  glow_ir.dealloc_activation %lrn : memref<1x64x56x56xf32>
  glow_ir.dealloc_activation %bn : memref<1x64x56x56xf32>
  glow_ir.dealloc_activation %ap : memref<1x64x28x28xf32>
  glow_ir.dealloc_activation %dwc : memref<1x64x56x56xf32>
  glow_ir.dealloc_activation %mp : memref<1x64x56x56xf32>
  glow_ir.dealloc_activation %c : memref<1x64x112x112xf32>
}

// CHECK-LABEL: glow_ir.func @dense declare {
// CHECK-NEXT: glow_ir.weight @input0 mutable input : memref<16x512xf32>
// CHECK-NEXT: glow_ir.weight @input1 mutable input : memref<512x1000xf32>
// CHECK-NEXT: glow_ir.weight @input2 mutable input : memref<1000xf32>
// CHECK-NEXT: glow_ir.weight @input3 mutable input : memref<12x64x32xf32>
// CHECK-NEXT: glow_ir.weight @input4 mutable input : memref<12x32x64xf32>
// CHECK-NEXT: glow_ir.weight @input5 mutable input : memref<2x128x768xf32>
// CHECK-NEXT: glow_ir.weight @input6 mutable input : memref<768xf32>
// CHECK-NEXT: glow_ir.weight @output0 mutable output : memref<16x1000xf32>
// CHECK-NEXT: } program(%input0, %input1, %input2, %input3, %input4, %input5, %input6, %output0) {
// CHECK-NEXT: %fc = glow_ir.alloc_activation : memref<16x1000xf32>
// CHECK-NEXT: glow_ir.fully_connected @out %fc, @in %input0, @in %input1, @in %input2 : memref<16x1000xf32>, memref<16x512xf32>, memref<512x1000xf32>, memref<1000xf32>
// CHECK-NEXT: %fc2 = glow_ir.alloc_activation : memref<16x1000xf32>
// CHECK-NEXT: glow_ir.fully_connected @out %fc2, @in %input0, @in %input1, @in %input2 {fused_activation = "leaky_relu", fused_activation_args = array<f32: 1.000000e-01>} : memref<16x1000xf32>, memref<16x512xf32>, memref<512x1000xf32>, memref<1000xf32>
// CHECK-NEXT: %mm = glow_ir.alloc_activation : memref<16x1000xf32>
// CHECK-NEXT: glow_ir.mat_mul @out %mm, @in %input0, @in %input1 : memref<16x1000xf32>, memref<16x512xf32>, memref<512x1000xf32>
// CHECK-NEXT: %bmm = glow_ir.alloc_activation : memref<12x64x64xf32>
// CHECK-NEXT: glow_ir.batch_mat_mul @out %bmm, @in %input3, @in %input4 : memref<12x64x64xf32>, memref<12x64x32xf32>, memref<12x32x64xf32>
// CHECK-NEXT: %ba = glow_ir.alloc_activation : memref<16x1000xf32>
// CHECK-NEXT: glow_ir.batched_add @out %ba, @in %mm, @in %input2 : memref<16x1000xf32>, memref<16x1000xf32>, memref<1000xf32>
// CHECK-NEXT: %ln = glow_ir.alloc_activation : memref<2x128x768xf32>
// CHECK-NEXT: glow_ir.layer_normalization @out %ln, @in %input5, @in %input6, @in %input6 {epsilon = 1.000000e-12 : f32} : memref<2x128x768xf32>, memref<2x128x768xf32>, memref<768xf32>, memref<768xf32>
// CHECK-NEXT: %sm = glow_ir.alloc_activation : memref<12x64x64xf32>
// CHECK-NEXT: glow_ir.soft_max @out %sm, @in %bmm {axis = -1 : i64} : memref<12x64x64xf32>
// CHECK-NEXT: glow_ir.log_soft_max @out %output0, @in %fc : memref<16x1000xf32>
// CHECK-NEXT: glow_ir.dealloc_activation %sm : memref<12x64x64xf32>
// CHECK-NEXT: glow_ir.dealloc_activation %ln : memref<2x128x768xf32>
// CHECK-NEXT: glow_ir.dealloc_activation %ba : memref<16x1000xf32>
// CHECK-NEXT: glow_ir.dealloc_activation %bmm : memref<12x64x64xf32>
// CHECK-NEXT: glow_ir.dealloc_activation %mm : memref<16x1000xf32>
// CHECK-NEXT: glow_ir.dealloc_activation %fc2 : memref<16x1000xf32>
// CHECK-NEXT: glow_ir.dealloc_activation %fc : memref<16x1000xf32>
// CHECK-NEXT: }
glow_ir.func @dense declare {
  glow_ir.weight @input0 mutable input : memref<16x512xf32>
  glow_ir.weight @input1 mutable input : memref<512x1000xf32>
  glow_ir.weight @input2 mutable input : memref<1000xf32>
  glow_ir.weight @input3 mutable input : memref<12x64x32xf32>
  glow_ir.weight @input4 mutable input : memref<12x32x64xf32>
  glow_ir.weight @input5 mutable input : memref<2x128x768xf32>
  glow_ir.weight @input6 mutable input : memref<768xf32>
  glow_ir.weight @output0 mutable output : memref<16x1000xf32>
} program(%input0, %input1, %input2, %input3, %input4, %input5, %input6, %output0) {
  %fc = glow_ir.alloc_activation : memref<16x1000xf32>
  glow_ir.fully_connected @out %fc, @in %input0, @in %input1, @in %input2 : memref<16x1000xf32>, memref<16x512xf32>, memref<512x1000xf32>, memref<1000xf32>
  %fc2 = glow_ir.alloc_activation : memref<16x1000xf32>
  glow_ir.fully_connected @out %fc2, @in %input0, @in %input1, @in %input2 {fused_activation = "leaky_relu", fused_activation_args = array<f32: 1.000000e-01>} : memref<16x1000xf32>, memref<16x512xf32>, memref<512x1000xf32>, memref<1000xf32>
  %mm = glow_ir.alloc_activation : memref<16x1000xf32>
  glow_ir.mat_mul @out %mm, @in %input0, @in %input1 : memref<16x1000xf32>, memref<16x512xf32>, memref<512x1000xf32>
  %bmm = glow_ir.alloc_activation : memref<12x64x64xf32>
  glow_ir.batch_mat_mul @out %bmm, @in %input3, @in %input4 : memref<12x64x64xf32>, memref<12x64x32xf32>, memref<12x32x64xf32>
  %ba = glow_ir.alloc_activation : memref<16x1000xf32>
  glow_ir.batched_add @out %ba, @in %mm, @in %input2 : memref<16x1000xf32>, memref<16x1000xf32>, memref<1000xf32>
  %ln = glow_ir.alloc_activation : memref<2x128x768xf32>
  glow_ir.layer_normalization @out %ln, @in %input5, @in %input6, @in %input6 {epsilon = 1.000000e-12 : f32} : memref<2x128x768xf32>, memref<2x128x768xf32>, memref<768xf32>, memref<768xf32>
  %sm = glow_ir.alloc_activation : memref<12x64x64xf32>
  glow_ir.soft_max @out %sm, @in %bmm {axis = -1 : i64} : memref<12x64x64xf32>
  glow_ir.log_soft_max @out %output0, @in %fc : memref<16x1000xf32>
  glow_ir.dealloc_activation %sm : memref<12x64x64xf32>
  glow_ir.dealloc_activation %ln : memref<2x128x768xf32>
  glow_ir.dealloc_activation %ba : memref<16x1000xf32>
  glow_ir.dealloc_activation %bmm : memref<12x64x64xf32>
  glow_ir.dealloc_activation %mm : memref<16x1000xf32>
  glow_ir.dealloc_activation %fc2 : memref<16x1000xf32>
  glow_ir.dealloc_activation %fc : memref<16x1000xf32>
}

// CHECK-LABEL: glow_ir.func @unary declare {
// CHECK-NEXT: glow_ir.weight @input0 mutable input : memref<4x8xf32>
// CHECK-NEXT: glow_ir.weight @input1 mutable input : memref<4x8xi32>
// CHECK-NEXT: glow_ir.weight @input2 mutable input : memref<4x8xi1>
// CHECK-NEXT: glow_ir.weight @input3 mutable input : memref<4x8xf16>
// CHECK-NEXT: } program(%input0, %input1, %input2, %input3) {
// CHECK-NEXT: %0 = glow_ir.alloc_activation : memref<4x8xi32>
// CHECK-NEXT: glow_ir.relu @out %0, @in %input1 : memref<4x8xi32>
// CHECK-NEXT: %1 = glow_ir.alloc_activation : memref<4x8xf32>
// CHECK-NEXT: glow_ir.sigmoid @out %1, @in %input0 : memref<4x8xf32>
// CHECK-NEXT: %2 = glow_ir.alloc_activation : memref<4x8xf16>
// CHECK-NEXT: glow_ir.tanh @out %2, @in %input3 : memref<4x8xf16>
// CHECK-NEXT: %3 = glow_ir.alloc_activation : memref<4x8xf32>
// CHECK-NEXT: glow_ir.gelu @out %3, @in %input0 {approximate = "tanh"} : memref<4x8xf32>
// CHECK-NEXT: %4 = glow_ir.alloc_activation : memref<4x8xf32>
// CHECK-NEXT: glow_ir.swish @out %4, @in %input0 : memref<4x8xf32>
// CHECK-NEXT: %5 = glow_ir.alloc_activation : memref<4x8xf32>
// CHECK-NEXT: glow_ir.element_exp @out %5, @in %input0 : memref<4x8xf32>
// CHECK-NEXT: %6 = glow_ir.alloc_activation : memref<4x8xf32>
// CHECK-NEXT: glow_ir.element_log @out %6, @in %input0 : memref<4x8xf32>
// CHECK-NEXT: %7 = glow_ir.alloc_activation : memref<4x8xf32>
// CHECK-NEXT: glow_ir.element_sqrt @out %7, @in %input0 : memref<4x8xf32>
// CHECK-NEXT: %8 = glow_ir.alloc_activation : memref<4x8xf32>
// CHECK-NEXT: glow_ir.element_rsqrt @out %8, @in %input0 : memref<4x8xf32>
// CHECK-NEXT: %9 = glow_ir.alloc_activation : memref<4x8xf32>
// CHECK-NEXT: glow_ir.element_erf @out %9, @in %input0 : memref<4x8xf32>
// CHECK-NEXT: %10 = glow_ir.alloc_activation : memref<4x8xi32>
// CHECK-NEXT: glow_ir.element_abs @out %10, @in %input1 : memref<4x8xi32>
// CHECK-NEXT: %11 = glow_ir.alloc_activation : memref<4x8xi32>
// CHECK-NEXT: glow_ir.element_neg @out %11, @in %input1 : memref<4x8xi32>
// CHECK-NEXT: %12 = glow_ir.alloc_activation : memref<4x8xf32>
// CHECK-NEXT: glow_ir.element_floor @out %12, @in %input0 : memref<4x8xf32>
// CHECK-NEXT: %13 = glow_ir.alloc_activation : memref<4x8xf32>
// CHECK-NEXT: glow_ir.element_ceil @out %13, @in %input0 : memref<4x8xf32>
// CHECK-NEXT: %14 = glow_ir.alloc_activation : memref<4x8xf32>
// CHECK-NEXT: glow_ir.element_round @out %14, @in %input0 : memref<4x8xf32>
// CHECK-NEXT: %15 = glow_ir.alloc_activation : memref<4x8xf32>
// CHECK-NEXT: glow_ir.element_reciprocal @out %15, @in %input0 : memref<4x8xf32>
// CHECK-NEXT: %16 = glow_ir.alloc_activation : memref<4x8xf32>
// CHECK-NEXT: glow_ir.element_sin @out %16, @in %input0 : memref<4x8xf32>
// CHECK-NEXT: %17 = glow_ir.alloc_activation : memref<4x8xf32>
// CHECK-NEXT: glow_ir.element_cos @out %17, @in %input0 : memref<4x8xf32>
// CHECK-NEXT: %18 = glow_ir.alloc_activation : memref<4x8xi1>
// CHECK-NEXT: glow_ir.element_not @out %18, @in %input2 : memref<4x8xi1>
// CHECK-NEXT: %19 = glow_ir.alloc_activation : memref<4x8xf32>
// CHECK-NEXT: glow_ir.leaky_relu @out %19, @in %input0 {alpha = 1.000000e-02 : f32} : memref<4x8xf32>
// CHECK-NEXT: %20 = glow_ir.alloc_activation : memref<4x8xf32>
// CHECK-NEXT: glow_ir.clip @out %20, @in %input0 {min = 0.000000e+00 : f32, max = 6.000000e+00 : f32} : memref<4x8xf32>
// CHECK-NEXT: %21 = glow_ir.alloc_activation : memref<4x8xf32>
// CHECK-NEXT: glow_ir.element_acos @out %21, @in %input0 : memref<4x8xf32>
// CHECK-NEXT: %22 = glow_ir.alloc_activation : memref<4x8xf16>
// CHECK-NEXT: glow_ir.element_asin @out %22, @in %input3 : memref<4x8xf16>
// CHECK-NEXT: %23 = glow_ir.alloc_activation : memref<4x8xf32>
// CHECK-NEXT: glow_ir.element_atan @out %23, @in %input0 : memref<4x8xf32>
// CHECK-NEXT: glow_ir.dealloc_activation %23 : memref<4x8xf32>
// CHECK-NEXT: glow_ir.dealloc_activation %22 : memref<4x8xf16>
// CHECK-NEXT: glow_ir.dealloc_activation %21 : memref<4x8xf32>
// CHECK-NEXT: glow_ir.dealloc_activation %20 : memref<4x8xf32>
// CHECK-NEXT: glow_ir.dealloc_activation %19 : memref<4x8xf32>
// CHECK-NEXT: glow_ir.dealloc_activation %18 : memref<4x8xi1>
// CHECK-NEXT: glow_ir.dealloc_activation %17 : memref<4x8xf32>
// CHECK-NEXT: glow_ir.dealloc_activation %16 : memref<4x8xf32>
// CHECK-NEXT: glow_ir.dealloc_activation %15 : memref<4x8xf32>
// CHECK-NEXT: glow_ir.dealloc_activation %14 : memref<4x8xf32>
// CHECK-NEXT: glow_ir.dealloc_activation %13 : memref<4x8xf32>
// CHECK-NEXT: glow_ir.dealloc_activation %12 : memref<4x8xf32>
// CHECK-NEXT: glow_ir.dealloc_activation %11 : memref<4x8xi32>
// CHECK-NEXT: glow_ir.dealloc_activation %10 : memref<4x8xi32>
// CHECK-NEXT: glow_ir.dealloc_activation %9 : memref<4x8xf32>
// CHECK-NEXT: glow_ir.dealloc_activation %8 : memref<4x8xf32>
// CHECK-NEXT: glow_ir.dealloc_activation %7 : memref<4x8xf32>
// CHECK-NEXT: glow_ir.dealloc_activation %6 : memref<4x8xf32>
// CHECK-NEXT: glow_ir.dealloc_activation %5 : memref<4x8xf32>
// CHECK-NEXT: glow_ir.dealloc_activation %4 : memref<4x8xf32>
// CHECK-NEXT: glow_ir.dealloc_activation %3 : memref<4x8xf32>
// CHECK-NEXT: glow_ir.dealloc_activation %2 : memref<4x8xf16>
// CHECK-NEXT: glow_ir.dealloc_activation %1 : memref<4x8xf32>
// CHECK-NEXT: glow_ir.dealloc_activation %0 : memref<4x8xi32>
// CHECK-NEXT: }
glow_ir.func @unary declare {
  glow_ir.weight @input0 mutable input : memref<4x8xf32>
  glow_ir.weight @input1 mutable input : memref<4x8xi32>
  glow_ir.weight @input2 mutable input : memref<4x8xi1>
  glow_ir.weight @input3 mutable input : memref<4x8xf16>
} program(%input0, %input1, %input2, %input3) {
  %0 = glow_ir.alloc_activation : memref<4x8xi32>
  glow_ir.relu @out %0, @in %input1 : memref<4x8xi32>
  %1 = glow_ir.alloc_activation : memref<4x8xf32>
  glow_ir.sigmoid @out %1, @in %input0 : memref<4x8xf32>
  %2 = glow_ir.alloc_activation : memref<4x8xf16>
  glow_ir.tanh @out %2, @in %input3 : memref<4x8xf16>
  %3 = glow_ir.alloc_activation : memref<4x8xf32>
  glow_ir.gelu @out %3, @in %input0 {approximate = "tanh"} : memref<4x8xf32>
  %4 = glow_ir.alloc_activation : memref<4x8xf32>
  glow_ir.swish @out %4, @in %input0 : memref<4x8xf32>
  %5 = glow_ir.alloc_activation : memref<4x8xf32>
  glow_ir.element_exp @out %5, @in %input0 : memref<4x8xf32>
  %6 = glow_ir.alloc_activation : memref<4x8xf32>
  glow_ir.element_log @out %6, @in %input0 : memref<4x8xf32>
  %7 = glow_ir.alloc_activation : memref<4x8xf32>
  glow_ir.element_sqrt @out %7, @in %input0 : memref<4x8xf32>
  %8 = glow_ir.alloc_activation : memref<4x8xf32>
  glow_ir.element_rsqrt @out %8, @in %input0 : memref<4x8xf32>
  %9 = glow_ir.alloc_activation : memref<4x8xf32>
  glow_ir.element_erf @out %9, @in %input0 : memref<4x8xf32>
  %10 = glow_ir.alloc_activation : memref<4x8xi32>
  glow_ir.element_abs @out %10, @in %input1 : memref<4x8xi32>
  %11 = glow_ir.alloc_activation : memref<4x8xi32>
  glow_ir.element_neg @out %11, @in %input1 : memref<4x8xi32>
  %12 = glow_ir.alloc_activation : memref<4x8xf32>
  glow_ir.element_floor @out %12, @in %input0 : memref<4x8xf32>
  %13 = glow_ir.alloc_activation : memref<4x8xf32>
  glow_ir.element_ceil @out %13, @in %input0 : memref<4x8xf32>
  %14 = glow_ir.alloc_activation : memref<4x8xf32>
  glow_ir.element_round @out %14, @in %input0 : memref<4x8xf32>
  %15 = glow_ir.alloc_activation : memref<4x8xf32>
  glow_ir.element_reciprocal @out %15, @in %input0 : memref<4x8xf32>
  %16 = glow_ir.alloc_activation : memref<4x8xf32>
  glow_ir.element_sin @out %16, @in %input0 : memref<4x8xf32>
  %17 = glow_ir.alloc_activation : memref<4x8xf32>
  glow_ir.element_cos @out %17, @in %input0 : memref<4x8xf32>
  %18 = glow_ir.alloc_activation : memref<4x8xi1>
  glow_ir.element_not @out %18, @in %input2 : memref<4x8xi1>
  %19 = glow_ir.alloc_activation : memref<4x8xf32>
  glow_ir.leaky_relu @out %19, @in %input0 {alpha = 1.000000e-02 : f32} : memref<4x8xf32>
  %20 = glow_ir.alloc_activation : memref<4x8xf32>
  glow_ir.clip @out %20, @in %input0 {min = 0.000000e+00 : f32, max = 6.000000e+00 : f32} : memref<4x8xf32>
  %21 = glow_ir.alloc_activation : memref<4x8xf32>
  glow_ir.element_acos @out %21, @in %input0 : memref<4x8xf32>
  %22 = glow_ir.alloc_activation : memref<4x8xf16>
  glow_ir.element_asin @out %22, @in %input3 : memref<4x8xf16>
  %23 = glow_ir.alloc_activation : memref<4x8xf32>
  glow_ir.element_atan @out %23, @in %input0 : memref<4x8xf32>
  glow_ir.dealloc_activation %23 : memref<4x8xf32>
  glow_ir.dealloc_activation %22 : memref<4x8xf16>
  glow_ir.dealloc_activation %21 : memref<4x8xf32>
  glow_ir.dealloc_activation %20 : memref<4x8xf32>
  glow_ir.dealloc_activation %19 : memref<4x8xf32>
  glow_ir.dealloc_activation %18 : memref<4x8xi1>
  glow_ir.dealloc_activation %17 : memref<4x8xf32>
  glow_ir.dealloc_activation %16 : memref<4x8xf32>
  glow_ir.dealloc_activation %15 : memref<4x8xf32>
  glow_ir.dealloc_activation %14 : memref<4x8xf32>
  glow_ir.dealloc_activation %13 : memref<4x8xf32>
  glow_ir.dealloc_activation %12 : memref<4x8xf32>
  glow_ir.dealloc_activation %11 : memref<4x8xi32>
  glow_ir.dealloc_activation %10 : memref<4x8xi32>
  glow_ir.dealloc_activation %9 : memref<4x8xf32>
  glow_ir.dealloc_activation %8 : memref<4x8xf32>
  glow_ir.dealloc_activation %7 : memref<4x8xf32>
  glow_ir.dealloc_activation %6 : memref<4x8xf32>
  glow_ir.dealloc_activation %5 : memref<4x8xf32>
  glow_ir.dealloc_activation %4 : memref<4x8xf32>
  glow_ir.dealloc_activation %3 : memref<4x8xf32>
  glow_ir.dealloc_activation %2 : memref<4x8xf16>
  glow_ir.dealloc_activation %1 : memref<4x8xf32>
  glow_ir.dealloc_activation %0 : memref<4x8xi32>
}

// CHECK-LABEL: glow_ir.func @softsign declare {
// CHECK-NEXT: glow_ir.weight @input0 mutable input : memref<4x8xf32>
// CHECK-NEXT: glow_ir.weight @input1 mutable input : memref<4x8xf16>
// CHECK-NEXT: glow_ir.weight @output0 mutable output : memref<4x8xf16>
// CHECK-NEXT: } program(%input0, %input1, %output0) {
// CHECK-NEXT: %0 = glow_ir.alloc_activation : memref<4x8xf32>
// CHECK-NEXT: glow_ir.element_softsign @out %0, @in %input0 : memref<4x8xf32>
// CHECK-NEXT: glow_ir.element_softsign @out %output0, @in %input1 : memref<4x8xf16>
// CHECK-NEXT: glow_ir.dealloc_activation %0 : memref<4x8xf32>
// CHECK-NEXT: }
glow_ir.func @softsign declare {
  glow_ir.weight @input0 mutable input : memref<4x8xf32>
  glow_ir.weight @input1 mutable input : memref<4x8xf16>
  glow_ir.weight @output0 mutable output : memref<4x8xf16>
} program(%input0, %input1, %output0) {
  %0 = glow_ir.alloc_activation : memref<4x8xf32>
  glow_ir.element_softsign @out %0, @in %input0 : memref<4x8xf32>
  glow_ir.element_softsign @out %output0, @in %input1 : memref<4x8xf16>
  glow_ir.dealloc_activation %0 : memref<4x8xf32>
}

// CHECK-LABEL: glow_ir.func @binary declare {
// CHECK-NEXT: glow_ir.weight @input0 mutable input : memref<4x8xf32>
// CHECK-NEXT: glow_ir.weight @input1 mutable input : memref<4x8xf32>
// CHECK-NEXT: glow_ir.weight @input2 mutable input : memref<4x8xi64>
// CHECK-NEXT: glow_ir.weight @input3 mutable input : memref<4x8xi64>
// CHECK-NEXT: glow_ir.weight @input4 mutable input : memref<4x8xi1>
// CHECK-NEXT: glow_ir.weight @input5 mutable input : memref<4x8xi1>
// CHECK-NEXT: glow_ir.weight @output0 mutable output : memref<4x8xf32>
// CHECK-NEXT: } program(%input0, %input1, %input2, %input3, %input4, %input5, %output0) {
// CHECK-NEXT: %0 = glow_ir.alloc_activation : memref<4x8xf32>
// CHECK-NEXT: glow_ir.element_add @out %0, @in %input0, @in %input1 : memref<4x8xf32>
// CHECK-NEXT: %1 = glow_ir.alloc_activation : memref<4x8xf32>
// CHECK-NEXT: glow_ir.element_sub @out %1, @in %input0, @in %input1 : memref<4x8xf32>
// CHECK-NEXT: %2 = glow_ir.alloc_activation : memref<4x8xf32>
// CHECK-NEXT: glow_ir.element_mul @out %2, @in %input0, @in %input1 : memref<4x8xf32>
// CHECK-NEXT: %3 = glow_ir.alloc_activation : memref<4x8xi64>
// CHECK-NEXT: glow_ir.element_div @out %3, @in %input2, @in %input3 : memref<4x8xi64>
// CHECK-NEXT: %4 = glow_ir.alloc_activation : memref<4x8xf32>
// CHECK-NEXT: glow_ir.element_max @out %4, @in %input0, @in %input1 : memref<4x8xf32>
// CHECK-NEXT: %5 = glow_ir.alloc_activation : memref<4x8xi64>
// CHECK-NEXT: glow_ir.element_min @out %5, @in %input2, @in %input3 : memref<4x8xi64>
// CHECK-NEXT: %6 = glow_ir.alloc_activation : memref<4x8xf32>
// CHECK-NEXT: glow_ir.element_pow @out %6, @in %input0, @in %input1 : memref<4x8xf32>
// CHECK-NEXT: %7 = glow_ir.alloc_activation : memref<4x8xi1>
// CHECK-NEXT: glow_ir.element_and @out %7, @in %input4, @in %input5 : memref<4x8xi1>
// CHECK-NEXT: %8 = glow_ir.alloc_activation : memref<4x8xi1>
// CHECK-NEXT: glow_ir.element_or @out %8, @in %input4, @in %input5 : memref<4x8xi1>
// CHECK-NEXT: %9 = glow_ir.alloc_activation : memref<4x8xi1>
// CHECK-NEXT: glow_ir.element_xor @out %9, @in %input4, @in %input5 : memref<4x8xi1>
// CHECK-NEXT: %10 = glow_ir.alloc_activation : memref<4x8xf32>
// CHECK-NEXT: glow_ir.prelu @out %10, @in %input0, @in %input1 : memref<4x8xf32>
// CHECK-NEXT: %11 = glow_ir.alloc_activation : memref<4x8xi1>
// CHECK-NEXT: glow_ir.element_cmp_eq @out %11, @in %input2, @in %input3 : memref<4x8xi1>, memref<4x8xi64>, memref<4x8xi64>
// CHECK-NEXT: %12 = glow_ir.alloc_activation : memref<4x8xi1>
// CHECK-NEXT: glow_ir.element_cmp_lt @out %12, @in %input0, @in %input1 : memref<4x8xi1>, memref<4x8xf32>, memref<4x8xf32>
// CHECK-NEXT: %13 = glow_ir.alloc_activation : memref<4x8xi1>
// CHECK-NEXT: glow_ir.element_cmp_lte @out %13, @in %input0, @in %input1 : memref<4x8xi1>, memref<4x8xf32>, memref<4x8xf32>
// CHECK-NEXT: glow_ir.element_select @out %output0, @in %12, @in %input0, @in %input1 : memref<4x8xf32>, memref<4x8xi1>, memref<4x8xf32>, memref<4x8xf32>
// CHECK-NEXT: glow_ir.dealloc_activation %13 : memref<4x8xi1>
// CHECK-NEXT: glow_ir.dealloc_activation %12 : memref<4x8xi1>
// CHECK-NEXT: glow_ir.dealloc_activation %11 : memref<4x8xi1>
// CHECK-NEXT: glow_ir.dealloc_activation %10 : memref<4x8xf32>
// CHECK-NEXT: glow_ir.dealloc_activation %9 : memref<4x8xi1>
// CHECK-NEXT: glow_ir.dealloc_activation %8 : memref<4x8xi1>
// CHECK-NEXT: glow_ir.dealloc_activation %7 : memref<4x8xi1>
// CHECK-NEXT: glow_ir.dealloc_activation %6 : memref<4x8xf32>
// CHECK-NEXT: glow_ir.dealloc_activation %5 : memref<4x8xi64>
// CHECK-NEXT: glow_ir.dealloc_activation %4 : memref<4x8xf32>
// CHECK-NEXT: glow_ir.dealloc_activation %3 : memref<4x8xi64>
// CHECK-NEXT: glow_ir.dealloc_activation %2 : memref<4x8xf32>
// CHECK-NEXT: glow_ir.dealloc_activation %1 : memref<4x8xf32>
// CHECK-NEXT: glow_ir.dealloc_activation %0 : memref<4x8xf32>
// CHECK-NEXT: }
glow_ir.func @binary declare {
  glow_ir.weight @input0 mutable input : memref<4x8xf32>
  glow_ir.weight @input1 mutable input : memref<4x8xf32>
  glow_ir.weight @input2 mutable input : memref<4x8xi64>
  glow_ir.weight @input3 mutable input : memref<4x8xi64>
  glow_ir.weight @input4 mutable input : memref<4x8xi1>
  glow_ir.weight @input5 mutable input : memref<4x8xi1>
  glow_ir.weight @output0 mutable output : memref<4x8xf32>
} program(%input0, %input1, %input2, %input3, %input4, %input5, %output0) {
  %0 = glow_ir.alloc_activation : memref<4x8xf32>
  glow_ir.element_add @out %0, @in %input0, @in %input1 : memref<4x8xf32>
  %1 = glow_ir.alloc_activation : memref<4x8xf32>
  glow_ir.element_sub @out %1, @in %input0, @in %input1 : memref<4x8xf32>
  %2 = glow_ir.alloc_activation : memref<4x8xf32>
  glow_ir.element_mul @out %2, @in %input0, @in %input1 : memref<4x8xf32>
  %3 = glow_ir.alloc_activation : memref<4x8xi64>
  glow_ir.element_div @out %3, @in %input2, @in %input3 : memref<4x8xi64>
  %4 = glow_ir.alloc_activation : memref<4x8xf32>
  glow_ir.element_max @out %4, @in %input0, @in %input1 : memref<4x8xf32>
  %5 = glow_ir.alloc_activation : memref<4x8xi64>
  glow_ir.element_min @out %5, @in %input2, @in %input3 : memref<4x8xi64>
  %6 = glow_ir.alloc_activation : memref<4x8xf32>
  glow_ir.element_pow @out %6, @in %input0, @in %input1 : memref<4x8xf32>
  %7 = glow_ir.alloc_activation : memref<4x8xi1>
  glow_ir.element_and @out %7, @in %input4, @in %input5 : memref<4x8xi1>
  %8 = glow_ir.alloc_activation : memref<4x8xi1>
  glow_ir.element_or @out %8, @in %input4, @in %input5 : memref<4x8xi1>
  %9 = glow_ir.alloc_activation : memref<4x8xi1>
  glow_ir.element_xor @out %9, @in %input4, @in %input5 : memref<4x8xi1>
  %10 = glow_ir.alloc_activation : memref<4x8xf32>
  glow_ir.prelu @out %10, @in %input0, @in %input1 : memref<4x8xf32>
  %11 = glow_ir.alloc_activation : memref<4x8xi1>
  glow_ir.element_cmp_eq @out %11, @in %input2, @in %input3 : memref<4x8xi1>, memref<4x8xi64>, memref<4x8xi64>
  %12 = glow_ir.alloc_activation : memref<4x8xi1>
  glow_ir.element_cmp_lt @out %12, @in %input0, @in %input1 : memref<4x8xi1>, memref<4x8xf32>, memref<4x8xf32>
  %13 = glow_ir.alloc_activation : memref<4x8xi1>
  glow_ir.element_cmp_lte @out %13, @in %input0, @in %input1 : memref<4x8xi1>, memref<4x8xf32>, memref<4x8xf32>
  glow_ir.element_select @out %output0, @in %12, @in %input0, @in %input1 : memref<4x8xf32>, memref<4x8xi1>, memref<4x8xf32>, memref<4x8xf32>
  glow_ir.dealloc_activation %13 : memref<4x8xi1>
  glow_ir.dealloc_activation %12 : memref<4x8xi1>
  glow_ir.dealloc_activation %11 : memref<4x8xi1>
  glow_ir.dealloc_activation %10 : memref<4x8xf32>
  glow_ir.dealloc_activation %9 : memref<4x8xi1>
  glow_ir.dealloc_activation %8 : memref<4x8xi1>
  glow_ir.dealloc_activation %7 : memref<4x8xi1>
  glow_ir.dealloc_activation %6 : memref<4x8xf32>
  glow_ir.dealloc_activation %5 : memref<4x8xi64>
  glow_ir.dealloc_activation %4 : memref<4x8xf32>
  glow_ir.dealloc_activation %3 : memref<4x8xi64>
  glow_ir.dealloc_activation %2 : memref<4x8xf32>
  glow_ir.dealloc_activation %1 : memref<4x8xf32>
  glow_ir.dealloc_activation %0 : memref<4x8xf32>
}

// CHECK-LABEL: glow_ir.func @quantized declare {
// CHECK-NEXT: glow_ir.weight @input0 mutable input : memref<1x3x32x32xf32>
// CHECK-NEXT: glow_ir.weight @input1 mutable input : memref<8x3x3x3x!glow.quant<i8, scale = 0.02, offset = 0>>
// CHECK-NEXT: glow_ir.weight @input2 mutable input : memref<8xi32>
// CHECK-NEXT: glow_ir.weight @input3 mutable input : memref<16x!glow.quant<ui8, scale = 0.5, offset = 128>>
// CHECK-NEXT: glow_ir.weight @input4 mutable input : memref<16x!glow.quant<i16, scale = 3.0517578125e-05, offset = 0>>
// CHECK-NEXT: glow_ir.weight @q_weights constant : memref<2x4x!glow.quant<i8, scale = 1.0e-05, offset = 0>> = dense_resource<q_weights> : tensor<2x4x!glow.quant<i8, scale = 1.0e-05, offset = 0>>
// CHECK-NEXT: glow_ir.weight @output0 mutable output : memref<1x8x32x32xf16>
// CHECK-NEXT: } program(%input0, %input1, %input2, %input3, %input4, %q_weights, %output0) {
// CHECK-NEXT: %xq = glow_ir.alloc_activation : memref<1x3x32x32x!glow.quant<i8, scale = 0.0078125, offset = -128>>
// CHECK-NEXT: glow_ir.quantize @out %xq, @in %input0 : memref<1x3x32x32x!glow.quant<i8, scale = 0.0078125, offset = -128>>, memref<1x3x32x32xf32>
// CHECK-NEXT: %cq = glow_ir.alloc_activation : memref<1x8x32x32x!glow.quant<i8, scale = 0.05, offset = 3>>
// CHECK-NEXT: glow_ir.convolution @out %cq, @in %xq, @in %input1, @in %input2 {kernels = array<i64: 3, 3>, pads = array<i64: 1, 1, 1, 1>} : memref<1x8x32x32x!glow.quant<i8, scale = 0.05, offset = 3>>, memref<1x3x32x32x!glow.quant<i8, scale = 0.0078125, offset = -128>>, memref<8x3x3x3x!glow.quant<i8, scale = 0.02, offset = 0>>, memref<8xi32>
// CHECK-NEXT: %rq = glow_ir.alloc_activation : memref<1x8x32x32x!glow.quant<i8, scale = 0.1, offset = 0>>
// CHECK-NEXT: glow_ir.rescale_quantized @out %rq, @in %cq : memref<1x8x32x32x!glow.quant<i8, scale = 0.1, offset = 0>>, memref<1x8x32x32x!glow.quant<i8, scale = 0.05, offset = 3>>
// CHECK-NEXT: %rl = glow_ir.alloc_activation : memref<1x8x32x32x!glow.quant<i8, scale = 0.1, offset = 0>>
// CHECK-NEXT: glow_ir.relu @out %rl, @in %rq : memref<1x8x32x32x!glow.quant<i8, scale = 0.1, offset = 0>>
// CHECK-NEXT: %dq = glow_ir.alloc_activation : memref<1x8x32x32xf32>
// CHECK-NEXT: glow_ir.dequantize @out %dq, @in %rl : memref<1x8x32x32xf32>, memref<1x8x32x32x!glow.quant<i8, scale = 0.1, offset = 0>>
// CHECK-NEXT: glow_ir.convert_to @out %output0, @in %dq : memref<1x8x32x32xf16>, memref<1x8x32x32xf32>
// CHECK-NEXT: %ur = glow_ir.alloc_activation : memref<16x!glow.quant<i32, scale = 0.25, offset = 0>>
// CHECK-NEXT: glow_ir.rescale_quantized @out %ur, @in %input3 : memref<16x!glow.quant<i32, scale = 0.25, offset = 0>>, memref<16x!glow.quant<ui8, scale = 0.5, offset = 128>>
// CHECK-NEXT: %sd = glow_ir.alloc_activation : memref<16xf32>
// CHECK-NEXT: glow_ir.dequantize @out %sd, @in %input4 : memref<16xf32>, memref<16x!glow.quant<i16, scale = 3.0517578125e-05, offset = 0>>
// CHECK-NEXT: glow_ir.dealloc_activation %sd : memref<16xf32>
// CHECK-NEXT: glow_ir.dealloc_activation %ur : memref<16x!glow.quant<i32, scale = 0.25, offset = 0>>
// CHECK-NEXT: glow_ir.dealloc_activation %dq : memref<1x8x32x32xf32>
// CHECK-NEXT: glow_ir.dealloc_activation %rl : memref<1x8x32x32x!glow.quant<i8, scale = 0.1, offset = 0>>
// CHECK-NEXT: glow_ir.dealloc_activation %rq : memref<1x8x32x32x!glow.quant<i8, scale = 0.1, offset = 0>>
// CHECK-NEXT: glow_ir.dealloc_activation %cq : memref<1x8x32x32x!glow.quant<i8, scale = 0.05, offset = 3>>
// CHECK-NEXT: glow_ir.dealloc_activation %xq : memref<1x3x32x32x!glow.quant<i8, scale = 0.0078125, offset = -128>>
// CHECK-NEXT: }
glow_ir.func @quantized declare {
  glow_ir.weight @input0 mutable input : memref<1x3x32x32xf32>
  glow_ir.weight @input1 mutable input : memref<8x3x3x3x!glow.quant<i8, scale = 0.02, offset = 0>>
  glow_ir.weight @input2 mutable input : memref<8xi32>
  glow_ir.weight @input3 mutable input : memref<16x!glow.quant<ui8, scale = 0.5, offset = 128>>
  glow_ir.weight @input4 mutable input : memref<16x!glow.quant<i16, scale = 3.0517578125e-05, offset = 0>>
  glow_ir.weight @q_weights constant : memref<2x4x!glow.quant<i8, scale = 1.0e-05, offset = 0>> = dense_resource<q_weights> : tensor<2x4x!glow.quant<i8, scale = 1.0e-05, offset = 0>>
  glow_ir.weight @output0 mutable output : memref<1x8x32x32xf16>
} program(%input0, %input1, %input2, %input3, %input4, %q_weights, %output0) {
  %xq = glow_ir.alloc_activation : memref<1x3x32x32x!glow.quant<i8, scale = 0.0078125, offset = -128>>
  glow_ir.quantize @out %xq, @in %input0 : memref<1x3x32x32x!glow.quant<i8, scale = 0.0078125, offset = -128>>, memref<1x3x32x32xf32>
  %cq = glow_ir.alloc_activation : memref<1x8x32x32x!glow.quant<i8, scale = 0.05, offset = 3>>
  glow_ir.convolution @out %cq, @in %xq, @in %input1, @in %input2 {kernels = array<i64: 3, 3>, pads = array<i64: 1, 1, 1, 1>} : memref<1x8x32x32x!glow.quant<i8, scale = 0.05, offset = 3>>, memref<1x3x32x32x!glow.quant<i8, scale = 0.0078125, offset = -128>>, memref<8x3x3x3x!glow.quant<i8, scale = 0.02, offset = 0>>, memref<8xi32>
  %rq = glow_ir.alloc_activation : memref<1x8x32x32x!glow.quant<i8, scale = 0.1, offset = 0>>
  glow_ir.rescale_quantized @out %rq, @in %cq : memref<1x8x32x32x!glow.quant<i8, scale = 0.1, offset = 0>>, memref<1x8x32x32x!glow.quant<i8, scale = 0.05, offset = 3>>
  %rl = glow_ir.alloc_activation : memref<1x8x32x32x!glow.quant<i8, scale = 0.1, offset = 0>>
  glow_ir.relu @out %rl, @in %rq : memref<1x8x32x32x!glow.quant<i8, scale = 0.1, offset = 0>>
  %dq = glow_ir.alloc_activation : memref<1x8x32x32xf32>
  glow_ir.dequantize @out %dq, @in %rl : memref<1x8x32x32xf32>, memref<1x8x32x32x!glow.quant<i8, scale = 0.1, offset = 0>>
  glow_ir.convert_to @out %output0, @in %dq : memref<1x8x32x32xf16>, memref<1x8x32x32xf32>
  %ur = glow_ir.alloc_activation : memref<16x!glow.quant<i32, scale = 0.25, offset = 0>>
  glow_ir.rescale_quantized @out %ur, @in %input3 : memref<16x!glow.quant<i32, scale = 0.25, offset = 0>>, memref<16x!glow.quant<ui8, scale = 0.5, offset = 128>>
  %sd = glow_ir.alloc_activation : memref<16xf32>
  glow_ir.dequantize @out %sd, @in %input4 : memref<16xf32>, memref<16x!glow.quant<i16, scale = 3.0517578125e-05, offset = 0>>
  glow_ir.dealloc_activation %sd : memref<16xf32>
  glow_ir.dealloc_activation %ur : memref<16x!glow.quant<i32, scale = 0.25, offset = 0>>
  glow_ir.dealloc_activation %dq : memref<1x8x32x32xf32>
  glow_ir.dealloc_activation %rl : memref<1x8x32x32x!glow.quant<i8, scale = 0.1, offset = 0>>
  glow_ir.dealloc_activation %rq : memref<1x8x32x32x!glow.quant<i8, scale = 0.1, offset = 0>>
  glow_ir.dealloc_activation %cq : memref<1x8x32x32x!glow.quant<i8, scale = 0.05, offset = 3>>
  glow_ir.dealloc_activation %xq : memref<1x3x32x32x!glow.quant<i8, scale = 0.0078125, offset = -128>>
}

// CHECK-LABEL: glow_ir.func @detection declare {
// CHECK:         glow_ir.roi_align @out %output0, @in %input0, @in %input1, @in %input2 {spatial_scale = 6.250000e-02 : f32, aligned = true} : memref<8x256x7x7xf32>, memref<2x256x14x14xf32>, memref<8x4xf32>, memref<8xi64>
// CHECK-NEXT:    %max = glow_ir.alloc_activation : memref<8x256x7x7xf32>
// CHECK-NEXT:    glow_ir.roi_align @out %max, @in %input0, @in %input1, @in %input2 {mode = "max", sampling_ratio = 2 : i64} : memref<8x256x7x7xf32>, memref<2x256x14x14xf32>, memref<8x4xf32>, memref<8xi64>
glow_ir.func @detection declare {
  glow_ir.weight @input0 mutable input : memref<2x256x14x14xf32>
  glow_ir.weight @input1 mutable input : memref<8x4xf32>
  glow_ir.weight @input2 mutable input : memref<8xi64>
  glow_ir.weight @output0 mutable output : memref<8x256x7x7xf32>
} program(%input0, %input1, %input2, %output0) {
  glow_ir.roi_align @out %output0, @in %input0, @in %input1, @in %input2 {spatial_scale = 6.250000e-02 : f32, aligned = true} : memref<8x256x7x7xf32>, memref<2x256x14x14xf32>, memref<8x4xf32>, memref<8xi64>
  %max = glow_ir.alloc_activation : memref<8x256x7x7xf32>
  glow_ir.roi_align @out %max, @in %input0, @in %input1, @in %input2 {mode = "max", sampling_ratio = 2 : i64} : memref<8x256x7x7xf32>, memref<2x256x14x14xf32>, memref<8x4xf32>, memref<8xi64>
  glow_ir.dealloc_activation %max : memref<8x256x7x7xf32>
}

// CHECK-LABEL: glow_ir.func @bounded declare {
// CHECK:         glow_ir.non_zero @out %output0, @out %output1, @in %input0 : memref<2x15xi64>, memref<i64>, memref<3x5xi1>
glow_ir.func @bounded declare {
  glow_ir.weight @input0 mutable input : memref<3x5xi1>
  glow_ir.weight @output0 mutable output : memref<2x15xi64>
  glow_ir.weight @output1 mutable output : memref<i64>
} program(%input0, %output0, %output1) {
  glow_ir.non_zero @out %output0, @out %output1, @in %input0 : memref<2x15xi64>, memref<i64>, memref<3x5xi1>
}

// CHECK-LABEL: glow_ir.func @nms declare {
// CHECK:         glow_ir.non_max_suppression @out %output0, @out %output1, @in %input0, @in %input1, @in %input2, @in %input3, @in %input4 {center_point_box = 1 : i64, use_score_threshold = false} : memref<12x3xi64>, memref<i64>, memref<1x6x4xf32>, memref<1x2x6xf32>, memref<1xi64>, memref<1xf32>, memref<1xf32>
glow_ir.func @nms declare {
  glow_ir.weight @input0 mutable input : memref<1x6x4xf32>
  glow_ir.weight @input1 mutable input : memref<1x2x6xf32>
  glow_ir.weight @input2 mutable input : memref<1xi64>
  glow_ir.weight @input3 mutable input : memref<1xf32>
  glow_ir.weight @input4 mutable input : memref<1xf32>
  glow_ir.weight @output0 mutable output : memref<12x3xi64>
  glow_ir.weight @output1 mutable output : memref<i64>
} program(%input0, %input1, %input2, %input3, %input4, %output0, %output1) {
  glow_ir.non_max_suppression @out %output0, @out %output1, @in %input0, @in %input1, @in %input2, @in %input3, @in %input4 {center_point_box = 1 : i64, use_score_threshold = false} : memref<12x3xi64>, memref<i64>, memref<1x6x4xf32>, memref<1x2x6xf32>, memref<1xi64>, memref<1xf32>, memref<1xf32>
}

// glow_ir.if: two programs whose arguments stand for the operands, a nested if, an
// activation allocated and freed in a branch.
// CHECK-LABEL: glow_ir.func @control_flow declare {
// CHECK-NEXT: glow_ir.weight @c mutable input : memref<1xi1>
// CHECK-NEXT: glow_ir.weight @x mutable input : memref<4xf32>
// CHECK-NEXT: glow_ir.weight @y mutable output : memref<4xf32>
// CHECK-NEXT: glow_ir.weight @z mutable output : memref<4xf32>
// CHECK-NEXT: } program(%c, %x, %y, %z) {
// CHECK-NEXT: glow_ir.if @out %y, @out %z, @in %c, @in %x : memref<4xf32>, memref<4xf32>, memref<1xi1>, memref<4xf32> {
// CHECK-NEXT: ^bb0(%y1: memref<4xf32>, %z1: memref<4xf32>, %c1: memref<1xi1>, %x1: memref<4xf32>):
// CHECK-NEXT: %t = glow_ir.alloc_activation : memref<4xf32>
// CHECK-NEXT: glow_ir.relu @out %t, @in %x1 : memref<4xf32>
// CHECK-NEXT: glow_ir.copy @out %y1, @in %t : memref<4xf32>
// CHECK-NEXT: glow_ir.if @out %z1, @in %c1, @in %t : memref<4xf32>, memref<1xi1>, memref<4xf32> {
// CHECK-NEXT: ^bb0(%z2: memref<4xf32>, %c2: memref<1xi1>, %t2: memref<4xf32>):
// CHECK-NEXT: glow_ir.copy @out %z2, @in %t2 : memref<4xf32>
// CHECK-NEXT: } else {
// CHECK-NEXT: ^bb0(%z3: memref<4xf32>, %c3: memref<1xi1>, %t3: memref<4xf32>):
// CHECK-NEXT: glow_ir.copy @out %z3, @in %t3 : memref<4xf32>
// CHECK-NEXT: }
// CHECK-NEXT: glow_ir.dealloc_activation %t : memref<4xf32>
// CHECK-NEXT: } else {
// CHECK-NEXT: ^bb0(%y4: memref<4xf32>, %z4: memref<4xf32>, %c4: memref<1xi1>, %x4: memref<4xf32>):
// CHECK-NEXT: glow_ir.copy @out %y4, @in %x4 : memref<4xf32>
// CHECK-NEXT: glow_ir.copy @out %z4, @in %x4 : memref<4xf32>
// CHECK-NEXT: }
// CHECK-NEXT: }
glow_ir.func @control_flow declare {
  glow_ir.weight @c mutable input : memref<1xi1>
  glow_ir.weight @x mutable input : memref<4xf32>
  glow_ir.weight @y mutable output : memref<4xf32>
  glow_ir.weight @z mutable output : memref<4xf32>
} program(%c, %x, %y, %z) {
  glow_ir.if @out %y, @out %z, @in %c, @in %x : memref<4xf32>, memref<4xf32>, memref<1xi1>, memref<4xf32> {
  ^bb0(%y1: memref<4xf32>, %z1: memref<4xf32>, %c1: memref<1xi1>, %x1: memref<4xf32>):
    %t = glow_ir.alloc_activation : memref<4xf32>
    glow_ir.relu @out %t, @in %x1 : memref<4xf32>
    glow_ir.copy @out %y1, @in %t : memref<4xf32>
    glow_ir.if @out %z1, @in %c1, @in %t : memref<4xf32>, memref<1xi1>, memref<4xf32> {
    ^bb0(%z2: memref<4xf32>, %c2: memref<1xi1>, %t2: memref<4xf32>):
      glow_ir.copy @out %z2, @in %t2 : memref<4xf32>
    } else {
    ^bb0(%z3: memref<4xf32>, %c3: memref<1xi1>, %t3: memref<4xf32>):
      glow_ir.copy @out %z3, @in %t3 : memref<4xf32>
    }
    glow_ir.dealloc_activation %t : memref<4xf32>
  } else {
  ^bb0(%y4: memref<4xf32>, %z4: memref<4xf32>, %c4: memref<1xi1>, %x4: memref<4xf32>):
    glow_ir.copy @out %y4, @in %x4 : memref<4xf32>
    glow_ir.copy @out %z4, @in %x4 : memref<4xf32>
  }
}

// glow_ir.loop: the carried buffer (@inout), the iteration number and condition it
// writes (@out), the trip count, the first condition and what the body reads (@in).
// CHECK-LABEL: glow_ir.func @loop declare {
// CHECK-NEXT: glow_ir.weight @n mutable input : memref<i64>
// CHECK-NEXT: glow_ir.weight @c mutable input : memref<i1>
// CHECK-NEXT: glow_ir.weight @x mutable input : memref<4xf32>
// CHECK-NEXT: glow_ir.weight @y mutable output : memref<4xf32>
// CHECK-NEXT: } program(%n, %c, %x, %y) {
// CHECK-NEXT: glow_ir.copy @out %y, @in %x : memref<4xf32>
// CHECK-NEXT: %i = glow_ir.alloc_activation : memref<i64>
// CHECK-NEXT: %k = glow_ir.alloc_activation : memref<i1>
// CHECK-NEXT: glow_ir.loop @inout %y, @out %i, @out %k, @in %n, @in %c, @in %x : memref<4xf32>, memref<i64>, memref<i1>, memref<i64>, memref<i1>, memref<4xf32> {
// CHECK-NEXT: ^bb0(%v: memref<4xf32>, %i1: memref<i64>, %k1: memref<i1>, %n1: memref<i64>, %c1: memref<i1>, %x1: memref<4xf32>):
// CHECK-NEXT: %t = glow_ir.alloc_activation : memref<4xf32>
// CHECK-NEXT: glow_ir.element_add @out %t, @in %v, @in %x1 : memref<4xf32>
// CHECK-NEXT: %s = glow_ir.alloc_activation : memref<f32>
// CHECK-NEXT: glow_ir.batched_reduce_add @out %s, @in %t {axes = array<i64: 0>} : memref<f32>, memref<4xf32>
// CHECK-NEXT: %z = glow_ir.alloc_activation : memref<f32>
// CHECK-NEXT: glow_ir.splat @out %z {value = 1.000000e+02 : f32} : memref<f32>
// CHECK-NEXT: glow_ir.element_cmp_lt @out %k1, @in %s, @in %z : memref<i1>, memref<f32>, memref<f32>
// CHECK-NEXT: glow_ir.copy @out %v, @in %t : memref<4xf32>
// CHECK-NEXT: glow_ir.dealloc_activation %z : memref<f32>
// CHECK-NEXT: glow_ir.dealloc_activation %s : memref<f32>
// CHECK-NEXT: glow_ir.dealloc_activation %t : memref<4xf32>
// CHECK-NEXT: }
// CHECK-NEXT: glow_ir.dealloc_activation %k : memref<i1>
// CHECK-NEXT: glow_ir.dealloc_activation %i : memref<i64>
// CHECK-NEXT: }
glow_ir.func @loop declare {
  glow_ir.weight @n mutable input : memref<i64>
  glow_ir.weight @c mutable input : memref<i1>
  glow_ir.weight @x mutable input : memref<4xf32>
  glow_ir.weight @y mutable output : memref<4xf32>
} program(%n, %c, %x, %y) {
  glow_ir.copy @out %y, @in %x : memref<4xf32>
  %i = glow_ir.alloc_activation : memref<i64>
  %k = glow_ir.alloc_activation : memref<i1>
  glow_ir.loop @inout %y, @out %i, @out %k, @in %n, @in %c, @in %x : memref<4xf32>, memref<i64>, memref<i1>, memref<i64>, memref<i1>, memref<4xf32> {
  ^bb0(%v: memref<4xf32>, %i1: memref<i64>, %k1: memref<i1>, %n1: memref<i64>, %c1: memref<i1>, %x1: memref<4xf32>):
    %t = glow_ir.alloc_activation : memref<4xf32>
    glow_ir.element_add @out %t, @in %v, @in %x1 : memref<4xf32>
    %s = glow_ir.alloc_activation : memref<f32>
    glow_ir.batched_reduce_add @out %s, @in %t {axes = array<i64: 0>} : memref<f32>, memref<4xf32>
    %z = glow_ir.alloc_activation : memref<f32>
    glow_ir.splat @out %z {value = 1.000000e+02 : f32} : memref<f32>
    glow_ir.element_cmp_lt @out %k1, @in %s, @in %z : memref<i1>, memref<f32>, memref<f32>
    glow_ir.copy @out %v, @in %t : memref<4xf32>
    glow_ir.dealloc_activation %z : memref<f32>
    glow_ir.dealloc_activation %s : memref<f32>
    glow_ir.dealloc_activation %t : memref<4xf32>
  }
  glow_ir.dealloc_activation %k : memref<i1>
  glow_ir.dealloc_activation %i : memref<i64>
}

{-#
  dialect_resources: {
    builtin: {
      d: "0x040000000000803f000000400000404000008040",fc_weights: "0x040000000000c0bf0000a0bf000080bf000040bf000000bf000080be000000000000803e0000003f0000403f0000803f0000a03f",one: "0x0800000001000000000000000100000000000000010000000000000001000000000000000100000000000000010000000000000001000000000000000100000000000000",q_weights: "0x0100000080ff00010203407f"
    }
  }
#-}

// Per-channel quantized dense instructions: an i8 filter (weights), its f32 scales and
// i32 offsets per output channel, an i32 or a float bias.
// CHECK-LABEL: glow_ir.func @per_channel declare {
// CHECK-NEXT: glow_ir.weight @input0 mutable input : memref<1x3x8x8x!glow.quant<i8, scale = 0.0078125, offset = -128>>
// CHECK-NEXT: glow_ir.weight @input1 mutable input : memref<4x3x3x3xi8>
// CHECK-NEXT: glow_ir.weight @input2 mutable input : memref<4xi32>
// CHECK-NEXT: glow_ir.weight @input3 mutable input : memref<4xf32>
// CHECK-NEXT: glow_ir.weight @input4 mutable input : memref<4xi32>
// CHECK-NEXT: glow_ir.weight @input5 mutable input : memref<2x6x!glow.quant<i8, scale = 0.5, offset = 0>>
// CHECK-NEXT: glow_ir.weight @input6 mutable input : memref<4x6xi8>
// CHECK-NEXT: glow_ir.weight @input7 mutable input : memref<4xf32>
// CHECK-NEXT: glow_ir.weight @output0 mutable output : memref<1x4x8x8x!glow.quant<i8, scale = 0.05, offset = 3>>
// CHECK-NEXT: glow_ir.weight @output1 mutable output : memref<2x4x!glow.quant<i8, scale = 0.25, offset = -1>>
// CHECK-NEXT: } program(%input0, %input1, %input2, %input3, %input4, %input5, %input6, %input7, %output0, %output1) {
// CHECK-NEXT: glow_ir.channelwise_quantized_convolution @out %output0, @in %input0, @in %input1, @in %input2, @in %input3, @in %input4 {kernels = array<i64: 3, 3>, pads = array<i64: 1, 1, 1, 1>} : memref<1x4x8x8x!glow.quant<i8, scale = 0.05, offset = 3>>, memref<1x3x8x8x!glow.quant<i8, scale = 0.0078125, offset = -128>>, memref<4x3x3x3xi8>, memref<4xi32>, memref<4xf32>, memref<4xi32>
// CHECK-NEXT: glow_ir.rowwise_quantized_fully_connected @out %output1, @in %input5, @in %input6, @in %input7, @in %input3, @in %input4 : memref<2x4x!glow.quant<i8, scale = 0.25, offset = -1>>, memref<2x6x!glow.quant<i8, scale = 0.5, offset = 0>>, memref<4x6xi8>, memref<4xf32>, memref<4xf32>, memref<4xi32>
// CHECK-NEXT: }
glow_ir.func @per_channel declare {
  glow_ir.weight @input0 mutable input : memref<1x3x8x8x!glow.quant<i8, scale = 0.0078125, offset = -128>>
  glow_ir.weight @input1 mutable input : memref<4x3x3x3xi8>
  glow_ir.weight @input2 mutable input : memref<4xi32>
  glow_ir.weight @input3 mutable input : memref<4xf32>
  glow_ir.weight @input4 mutable input : memref<4xi32>
  glow_ir.weight @input5 mutable input : memref<2x6x!glow.quant<i8, scale = 0.5, offset = 0>>
  glow_ir.weight @input6 mutable input : memref<4x6xi8>
  glow_ir.weight @input7 mutable input : memref<4xf32>
  glow_ir.weight @output0 mutable output : memref<1x4x8x8x!glow.quant<i8, scale = 0.05, offset = 3>>
  glow_ir.weight @output1 mutable output : memref<2x4x!glow.quant<i8, scale = 0.25, offset = -1>>
} program(%input0, %input1, %input2, %input3, %input4, %input5, %input6, %input7, %output0, %output1) {
  glow_ir.channelwise_quantized_convolution @out %output0, @in %input0, @in %input1, @in %input2, @in %input3, @in %input4 {kernels = array<i64: 3, 3>, pads = array<i64: 1, 1, 1, 1>} : memref<1x4x8x8x!glow.quant<i8, scale = 0.05, offset = 3>>, memref<1x3x8x8x!glow.quant<i8, scale = 0.0078125, offset = -128>>, memref<4x3x3x3xi8>, memref<4xi32>, memref<4xf32>, memref<4xi32>
  glow_ir.rowwise_quantized_fully_connected @out %output1, @in %input5, @in %input6, @in %input7, @in %input3, @in %input4 : memref<2x4x!glow.quant<i8, scale = 0.25, offset = -1>>, memref<2x6x!glow.quant<i8, scale = 0.5, offset = 0>>, memref<4x6xi8>, memref<4xf32>, memref<4xf32>, memref<4xi32>
}

// A table lookup: the quantized input indexes a 256-entry i8 table.
// CHECK-LABEL: glow_ir.func @lookup_table declare {
// CHECK-NEXT: glow_ir.weight @input0 mutable input : memref<2x3x!glow.quant<i8, scale = 0.0078125, offset = 0>>
// CHECK-NEXT: glow_ir.weight @input1 mutable input : memref<256xi8>
// CHECK-NEXT: glow_ir.weight @output0 mutable output : memref<2x3x!glow.quant<i8, scale = 0.00390625, offset = -128>>
// CHECK-NEXT: } program(%input0, %input1, %output0) {
// CHECK-NEXT: glow_ir.int_lookup_table @out %output0, @in %input0, @in %input1 : memref<2x3x!glow.quant<i8, scale = 0.00390625, offset = -128>>, memref<2x3x!glow.quant<i8, scale = 0.0078125, offset = 0>>, memref<256xi8>
// CHECK-NEXT: }
glow_ir.func @lookup_table declare {
  glow_ir.weight @input0 mutable input : memref<2x3x!glow.quant<i8, scale = 0.0078125, offset = 0>>
  glow_ir.weight @input1 mutable input : memref<256xi8>
  glow_ir.weight @output0 mutable output : memref<2x3x!glow.quant<i8, scale = 0.00390625, offset = -128>>
} program(%input0, %input1, %output0) {
  glow_ir.int_lookup_table @out %output0, @in %input0, @in %input1 : memref<2x3x!glow.quant<i8, scale = 0.00390625, offset = -128>>, memref<2x3x!glow.quant<i8, scale = 0.0078125, offset = 0>>, memref<256xi8>
}

// The shifts (their graph ops are in dialects/glow/roundtrip.mlir's @bitwise).
// CHECK-LABEL: glow_ir.func @shifts declare {
// CHECK-NEXT: glow_ir.weight @input0 mutable input : memref<4x8xui8>
// CHECK-NEXT: glow_ir.weight @input1 mutable input : memref<4x8xui8>
// CHECK-NEXT: glow_ir.weight @output0 mutable output : memref<4x8xui8>
// CHECK-NEXT: } program(%input0, %input1, %output0) {
// CHECK-NEXT: glow_ir.element_shift_left @out %output0, @in %input0, @in %input1 : memref<4x8xui8>
// CHECK-NEXT: glow_ir.element_shift_right @out %output0, @in %output0, @in %input1 : memref<4x8xui8>
// CHECK-NEXT: }
// GENERIC: "glow_ir.element_shift_left"
// GENERIC: "glow_ir.element_shift_right"
glow_ir.func @shifts declare {
  glow_ir.weight @input0 mutable input : memref<4x8xui8>
  glow_ir.weight @input1 mutable input : memref<4x8xui8>
  glow_ir.weight @output0 mutable output : memref<4x8xui8>
} program(%input0, %input1, %output0) {
  glow_ir.element_shift_left @out %output0, @in %input0, @in %input1 : memref<4x8xui8>
  glow_ir.element_shift_right @out %output0, @in %output0, @in %input1 : memref<4x8xui8>
}
