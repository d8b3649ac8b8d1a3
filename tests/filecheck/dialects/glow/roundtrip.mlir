// Every op of glow_mlir.dialects.glow.ALL_OPS (and CONTROL_FLOW_OPS), in realistic shapes and with its optional
// attributes, round-trips through glow-opt in custom form and in generic form: the same
// CHECK lines hold for the output of one, two and generic-then-custom passes through the
// printer. GENERIC checks the generic form itself. Also: !glow.quant element types (i8,
// ui8, i16, i32 storage), dense and dense_resource constants whose blobs survive every
// trip, variadic concat (three operands and one), top_k's two results.
//
// RUN: glow-opt %s | FileCheck %s
// RUN: glow-opt %s | glow-opt | FileCheck %s
// RUN: glow-opt %s --print-op-generic | FileCheck %s --check-prefix=GENERIC
// RUN: glow-opt %s --print-op-generic | glow-opt | FileCheck %s
// RUN: glow-opt %s --print-op-generic | glow-opt --print-op-generic | FileCheck %s --check-prefix=GENERIC
// Every op of the dialect has a CHECK and a GENERIC line here:
// RUN: %python %S/../../inputs/op_coverage.py %s CHECK
// RUN: %python %S/../../inputs/op_coverage.py %s GENERIC

// CHECK-LABEL: func.func @data(%x: tensor<2x3x4xf32>, %y: tensor<2x5x4xf32>, %idx: tensor<2x3xi32>) {
// CHECK-NEXT:    %w = glow.constant dense_resource<fc_weights> : tensor<4x3xf32>
// CHECK-NEXT:    %d = glow.constant dense<{{\[\[}}1.000000e+00, 2.000000e+00], [3.000000e+00, 4.000000e+00]]> : tensor<2x2xf32>
// CHECK-NEXT:    %one = glow.constant dense<1> : tensor<8xi64>
// CHECK-NEXT:    %z = glow.splat {value = 0.000000e+00 : f32} : tensor<2x3x4xf32>
// CHECK-NEXT:    %cat = glow.concat %x, %y, %x {dim = 1 : i64} : (tensor<2x3x4xf32>, tensor<2x5x4xf32>, tensor<2x3x4xf32>) -> tensor<2x11x4xf32>
// CHECK-NEXT:    %cat1 = glow.concat %x {dim = -1 : i64} : (tensor<2x3x4xf32>) -> tensor<2x3x4xf32>
// CHECK-NEXT:    %sl = glow.slice %cat {start = array<i64: 0, 2, 1>} : tensor<2x11x4xf32> -> tensor<2x3x2xf32>
// CHECK-NEXT:    %ins = glow.insert_tensor %cat, %x {start = array<i64: 0, 1, 0>, count = 3 : i64, axis = 1 : i64} : (tensor<2x11x4xf32>, tensor<2x3x4xf32>) -> tensor<2x11x4xf32>
// CHECK-NEXT:    %r = glow.reshape %x : tensor<2x3x4xf32> -> tensor<6x4xf32>
// CHECK-NEXT:    %t = glow.transpose %x {shuffle = array<i64: 2, 0, 1>} : tensor<2x3x4xf32> -> tensor<4x2x3xf32>
// CHECK-NEXT:    %b = glow.broadcast %w {axis = 1 : i64} : tensor<4x3xf32> -> tensor<2x4x3xf32>
// CHECK-NEXT:    %tl = glow.tile %x {count = 2 : i64, axis = 0 : i64} : tensor<2x3x4xf32> -> tensor<4x3x4xf32>
// CHECK-NEXT:    %p = glow.pad %x {pads = array<i64: 0, 1, 2, 0, 1, 2>, mode = "reflect"} : tensor<2x3x4xf32> -> tensor<2x5x8xf32>
// CHECK-NEXT:    %p2 = glow.pad %x {pads = array<i64: 0, 0, 1, 0, 0, 1>, value = -1.000000e+00 : f32} : tensor<2x3x4xf32> -> tensor<2x3x6xf32>
// CHECK-NEXT:    %g = glow.gather %r, %idx {axis = 0 : i64} : (tensor<6x4xf32>, tensor<2x3xi32>) -> tensor<2x3x4xf32>
// CHECK-NEXT:    %tv = glow.reshape %t : tensor<4x2x3xf32> -> tensor<8x3xf32>
// CHECK-NEXT:    %bv = glow.reshape %b : tensor<2x4x3xf32> -> tensor<8x3xf32>
// CHECK-NEXT:    %sc = glow.scatter_data %tv, %one, %bv {reduction = "add"} : (tensor<8x3xf32>, tensor<8xi64>, tensor<8x3xf32>) -> tensor<8x3xf32>
// CHECK-NEXT:    func.return
// CHECK-NEXT:  }
// GENERIC-LABEL: "func.func"() <{sym_name = "data", function_type = (tensor<2x3x4xf32>, tensor<2x5x4xf32>, tensor<2x3xi32>) -> ()}> ({
// GENERIC-NEXT:    ^bb0(%x: tensor<2x3x4xf32>, %y: tensor<2x5x4xf32>, %idx: tensor<2x3xi32>):
// GENERIC-NEXT:    %w = "glow.constant"() {value = dense_resource<fc_weights> : tensor<4x3xf32>} : () -> tensor<4x3xf32>
// GENERIC-NEXT:    %d = "glow.constant"() {value = dense<{{\[\[}}1.000000e+00, 2.000000e+00], [3.000000e+00, 4.000000e+00]]> : tensor<2x2xf32>} : () -> tensor<2x2xf32>
// GENERIC-NEXT:    %one = "glow.constant"() {value = dense<1> : tensor<8xi64>} : () -> tensor<8xi64>
// GENERIC-NEXT:    %z = "glow.splat"() {value = 0.000000e+00 : f32} : () -> tensor<2x3x4xf32>
// GENERIC-NEXT:    %cat = "glow.concat"(%x, %y, %x) {dim = 1 : i64} : (tensor<2x3x4xf32>, tensor<2x5x4xf32>, tensor<2x3x4xf32>) -> tensor<2x11x4xf32>
// GENERIC-NEXT:    %cat1 = "glow.concat"(%x) {dim = -1 : i64} : (tensor<2x3x4xf32>) -> tensor<2x3x4xf32>
// GENERIC-NEXT:    %sl = "glow.slice"(%cat) {start = array<i64: 0, 2, 1>} : (tensor<2x11x4xf32>) -> tensor<2x3x2xf32>
// GENERIC-NEXT:    %ins = "glow.insert_tensor"(%cat, %x) {start = array<i64: 0, 1, 0>, count = 3 : i64, axis = 1 : i64} : (tensor<2x11x4xf32>, tensor<2x3x4xf32>) -> tensor<2x11x4xf32>
// GENERIC-NEXT:    %r = "glow.reshape"(%x) : (tensor<2x3x4xf32>) -> tensor<6x4xf32>
// GENERIC-NEXT:    %t = "glow.transpose"(%x) {shuffle = array<i64: 2, 0, 1>} : (tensor<2x3x4xf32>) -> tensor<4x2x3xf32>
// GENERIC-NEXT:    %b = "glow.broadcast"(%w) {axis = 1 : i64} : (tensor<4x3xf32>) -> tensor<2x4x3xf32>
// GENERIC-NEXT:    %tl = "glow.tile"(%x) {count = 2 : i64, axis = 0 : i64} : (tensor<2x3x4xf32>) -> tensor<4x3x4xf32>
// GENERIC-NEXT:    %p = "glow.pad"(%x) {pads = array<i64: 0, 1, 2, 0, 1, 2>, mode = "reflect"} : (tensor<2x3x4xf32>) -> tensor<2x5x8xf32>
// GENERIC-NEXT:    %p2 = "glow.pad"(%x) {pads = array<i64: 0, 0, 1, 0, 0, 1>, value = -1.000000e+00 : f32} : (tensor<2x3x4xf32>) -> tensor<2x3x6xf32>
// GENERIC-NEXT:    %g = "glow.gather"(%r, %idx) {axis = 0 : i64} : (tensor<6x4xf32>, tensor<2x3xi32>) -> tensor<2x3x4xf32>
// GENERIC-NEXT:    %tv = "glow.reshape"(%t) : (tensor<4x2x3xf32>) -> tensor<8x3xf32>
// GENERIC-NEXT:    %bv = "glow.reshape"(%b) : (tensor<2x4x3xf32>) -> tensor<8x3xf32>
// GENERIC-NEXT:    %sc = "glow.scatter_data"(%tv, %one, %bv) {reduction = "add"} : (tensor<8x3xf32>, tensor<8xi64>, tensor<8x3xf32>) -> tensor<8x3xf32>
// GENERIC-NEXT:    "func.return"() : () -> ()
// GENERIC-NEXT:  }) : () -> ()
func.func @data(%x: tensor<2x3x4xf32>, %y: tensor<2x5x4xf32>, %idx: tensor<2x3xi32>) {
  %w = glow.constant dense_resource<fc_weights> : tensor<4x3xf32>
  %d = glow.constant dense<[[1.0, 2.0], [3.0, 4.0]]> : tensor<2x2xf32>
  %one = glow.constant dense<1> : tensor<8xi64>
  %z = glow.splat {value = 0.0 : f32} : tensor<2x3x4xf32>
  %cat = glow.concat %x, %y, %x {dim = 1 : i64} : (tensor<2x3x4xf32>, tensor<2x5x4xf32>, tensor<2x3x4xf32>) -> tensor<2x11x4xf32>
  %cat1 = glow.concat %x {dim = -1 : i64} : (tensor<2x3x4xf32>) -> tensor<2x3x4xf32>
  %sl = glow.slice %cat {start = array<i64: 0, 2, 1>} : tensor<2x11x4xf32> -> tensor<2x3x2xf32>
  %ins = glow.insert_tensor %cat, %x {start = array<i64: 0, 1, 0>, count = 3 : i64, axis = 1 : i64} : (tensor<2x11x4xf32>, tensor<2x3x4xf32>) -> tensor<2x11x4xf32>
  %r = glow.reshape %x : tensor<2x3x4xf32> -> tensor<6x4xf32>
  %t = glow.transpose %x {shuffle = array<i64: 2, 0, 1>} : tensor<2x3x4xf32> -> tensor<4x2x3xf32>
  %b = glow.broadcast %w {axis = 1 : i64} : tensor<4x3xf32> -> tensor<2x4x3xf32>
  %tl = glow.tile %x {count = 2 : i64, axis = 0 : i64} : tensor<2x3x4xf32> -> tensor<4x3x4xf32>
  %p = glow.pad %x {pads = array<i64: 0, 1, 2, 0, 1, 2>, mode = "reflect"} : tensor<2x3x4xf32> -> tensor<2x5x8xf32>
  %p2 = glow.pad %x {pads = array<i64: 0, 0, 1, 0, 0, 1>, value = -1.000000e+00 : f32} : tensor<2x3x4xf32> -> tensor<2x3x6xf32>
  %g = glow.gather %r, %idx {axis = 0 : i64} : (tensor<6x4xf32>, tensor<2x3xi32>) -> tensor<2x3x4xf32>
  %tv = glow.reshape %t : tensor<4x2x3xf32> -> tensor<8x3xf32>
  %bv = glow.reshape %b : tensor<2x4x3xf32> -> tensor<8x3xf32>
  %sc = glow.scatter_data %tv, %one, %bv {reduction = "add"} : (tensor<8x3xf32>, tensor<8xi64>, tensor<8x3xf32>) -> tensor<8x3xf32>
  func.return
}

// CHECK-LABEL: func.func @reductions(%x: tensor<8x16x32xf32>, %i: tensor<4x10xi32>) -> (tensor<8x16x5xf32>, tensor<8x16x5xi64>) {
// CHECK-NEXT:    %s = glow.batched_reduce_add %x {axes = array<i64: 0>} : tensor<8x16x32xf32> -> tensor<16x32xf32>
// CHECK-NEXT:    %m = glow.batched_reduce_mean %x {axes = array<i64: 1, 2>} : tensor<8x16x32xf32> -> tensor<8xf32>
// CHECK-NEXT:    %mx = glow.batched_reduce_max %x {axes = array<i64: -1>} : tensor<8x16x32xf32> -> tensor<8x16xf32>
// CHECK-NEXT:    %mn = glow.batched_reduce_min %i {axes = array<i64: 1>} : tensor<4x10xi32> -> tensor<4xi32>
// CHECK-NEXT:    %pr = glow.batched_reduce_prod %i {axes = array<i64: 0>} : tensor<4x10xi32> -> tensor<10xi32>
// CHECK-NEXT:    %am = glow.arg_max %x {axis = 2 : i64} : tensor<8x16x32xf32> -> tensor<8x16x1xi64>
// CHECK-NEXT:    %an = glow.arg_min %x {axis = 1 : i64, keep_dims = false} : tensor<8x16x32xf32> -> tensor<8x32xi32>
// CHECK-NEXT:    %v, %ix = glow.top_k %x {k = 5 : i64} : (tensor<8x16x32xf32>) -> (tensor<8x16x5xf32>, tensor<8x16x5xi64>)
// CHECK-NEXT:    func.return %v, %ix : tensor<8x16x5xf32>, tensor<8x16x5xi64>
// CHECK-NEXT:  }
// GENERIC-LABEL: "func.func"() <{sym_name = "reductions", function_type = (tensor<8x16x32xf32>, tensor<4x10xi32>) -> (tensor<8x16x5xf32>, tensor<8x16x5xi64>)}> ({
// GENERIC-NEXT:    ^bb0(%x: tensor<8x16x32xf32>, %i: tensor<4x10xi32>):
// GENERIC-NEXT:    %s = "glow.batched_reduce_add"(%x) {axes = array<i64: 0>} : (tensor<8x16x32xf32>) -> tensor<16x32xf32>
// GENERIC-NEXT:    %m = "glow.batched_reduce_mean"(%x) {axes = array<i64: 1, 2>} : (tensor<8x16x32xf32>) -> tensor<8xf32>
// GENERIC-NEXT:    %mx = "glow.batched_reduce_max"(%x) {axes = array<i64: -1>} : (tensor<8x16x32xf32>) -> tensor<8x16xf32>
// GENERIC-NEXT:    %mn = "glow.batched_reduce_min"(%i) {axes = array<i64: 1>} : (tensor<4x10xi32>) -> tensor<4xi32>
// GENERIC-NEXT:    %pr = "glow.batched_reduce_prod"(%i) {axes = array<i64: 0>} : (tensor<4x10xi32>) -> tensor<10xi32>
// GENERIC-NEXT:    %am = "glow.arg_max"(%x) {axis = 2 : i64} : (tensor<8x16x32xf32>) -> tensor<8x16x1xi64>
// GENERIC-NEXT:    %an = "glow.arg_min"(%x) {axis = 1 : i64, keep_dims = false} : (tensor<8x16x32xf32>) -> tensor<8x32xi32>
// GENERIC-NEXT:    %v, %ix = "glow.top_k"(%x) {k = 5 : i64} : (tensor<8x16x32xf32>) -> (tensor<8x16x5xf32>, tensor<8x16x5xi64>)
// GENERIC-NEXT:    "func.return"(%v, %ix) : (tensor<8x16x5xf32>, tensor<8x16x5xi64>) -> ()
// GENERIC-NEXT:  }) : () -> ()
func.func @reductions(%x: tensor<8x16x32xf32>, %i: tensor<4x10xi32>) -> (tensor<8x16x5xf32>, tensor<8x16x5xi64>) {
  %s = glow.batched_reduce_add %x {axes = array<i64: 0>} : tensor<8x16x32xf32> -> tensor<16x32xf32>
  %m = glow.batched_reduce_mean %x {axes = array<i64: 1, 2>} : tensor<8x16x32xf32> -> tensor<8xf32>
  %mx = glow.batched_reduce_max %x {axes = array<i64: -1>} : tensor<8x16x32xf32> -> tensor<8x16xf32>
  %mn = glow.batched_reduce_min %i {axes = array<i64: 1>} : tensor<4x10xi32> -> tensor<4xi32>
  %pr = glow.batched_reduce_prod %i {axes = array<i64: 0>} : tensor<4x10xi32> -> tensor<10xi32>
  %am = glow.arg_max %x {axis = 2 : i64} : tensor<8x16x32xf32> -> tensor<8x16x1xi64>
  %an = glow.arg_min %x {axis = 1 : i64, keep_dims = false} : tensor<8x16x32xf32> -> tensor<8x32xi32>
  %v, %ix = glow.top_k %x {k = 5 : i64} : (tensor<8x16x32xf32>) -> (tensor<8x16x5xf32>, tensor<8x16x5xi64>)
  func.return %v, %ix : tensor<8x16x5xf32>, tensor<8x16x5xi64>
}

// CHECK-LABEL: func.func @cnn(%img: tensor<1x3x224x224xf32>, %w: tensor<64x3x7x7xf32>, %b: tensor<64xf32>, %dw: tensor<64x1x3x3xf32>, %nhwc: tensor<1x56x56x64xf32>, %wo: tensor<32x1x1x64xf32>, %b32: tensor<32xf32>) -> tensor<1x64x1x1xf32> {
// CHECK-NEXT:    %c = glow.convolution %img, %w, %b {kernels = array<i64: 7, 7>, strides = array<i64: 2, 2>, pads = array<i64: 3, 3, 3, 3>, fused_activation = "relu"} : (tensor<1x3x224x224xf32>, tensor<64x3x7x7xf32>, tensor<64xf32>) -> tensor<1x64x112x112xf32>
// CHECK-NEXT:    %mp = glow.max_pool %c {kernels = array<i64: 3, 3>, strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>} : tensor<1x64x112x112xf32> -> tensor<1x64x56x56xf32>
// CHECK-NEXT:    %dwc = glow.convolution %mp, %dw, %b {kernels = array<i64: 3, 3>, pads = array<i64: 2, 2, 2, 2>, dilation = array<i64: 2, 2>, group = 64 : i64, fused_activation = "clip", fused_activation_args = array<f32: 0.000000e+00, 6.000000e+00>} : (tensor<1x64x56x56xf32>, tensor<64x1x3x3xf32>, tensor<64xf32>) -> tensor<1x64x56x56xf32>
// CHECK-NEXT:    %ap = glow.avg_pool %dwc {kernels = array<i64: 2, 2>, strides = array<i64: 2, 2>, count_include_pad = true} : tensor<1x64x56x56xf32> -> tensor<1x64x28x28xf32>
// CHECK-NEXT:    %gap = glow.adaptive_avg_pool %ap : tensor<1x64x28x28xf32> -> tensor<1x64x1x1xf32>
// CHECK-NEXT:    %bn = glow.batch_normalization %mp, %b, %b, %b, %b {epsilon = 1.000000e-05 : f32, momentum = 9.000000e-01 : f32} : (tensor<1x64x56x56xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>) -> tensor<1x64x56x56xf32>
// CHECK-NEXT:    %lrn = glow.local_response_normalization %mp {half_window_size = 2 : i64, alpha = 1.000000e-04 : f32, beta = 7.500000e-01 : f32, k = 2.000000e+00 : f32} : tensor<1x64x56x56xf32>
// CHECK-NEXT:    %s2d = glow.space_to_depth %mp {block_size = 2 : i64} : tensor<1x64x56x56xf32> -> tensor<1x256x28x28xf32>
// CHECK-NEXT:    %rn = glow.resize_nearest %mp {scale = array<f32: 1.000000e+00, 1.000000e+00, 2.000000e+00, 2.000000e+00>, coordinate_transformation_mode = "half_pixel", nearest_mode = "round_prefer_ceil"} : tensor<1x64x56x56xf32> -> tensor<1x64x112x112xf32>
// CHECK-NEXT:    %rb = glow.resize_bilinear %mp {scale = array<f32: 1.000000e+00, 1.000000e+00, 5.000000e-01, 5.000000e-01>} : tensor<1x64x56x56xf32> -> tensor<1x64x28x28xf32>
// CHECK-NEXT:    %nc = glow.convolution %nhwc, %wo, %b32 {kernels = array<i64: 1, 1>, layout = "NHWC"} : (tensor<1x56x56x64xf32>, tensor<32x1x1x64xf32>, tensor<32xf32>) -> tensor<1x56x56x32xf32>
// CHECK-NEXT:    %np = glow.max_pool %nc {kernels = array<i64: 2, 2>, strides = array<i64: 2, 2>, layout = "NHWC"} : tensor<1x56x56x32xf32> -> tensor<1x28x28x32xf32>
// CHECK-NEXT:    %mpg = glow.max_pool_grad %c, %mp {kernels = array<i64: 3, 3>, strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>} : (tensor<1x64x112x112xf32>, tensor<1x64x56x56xf32>) -> tensor<1x64x112x112xf32>
// CHECK-NEXT:    func.return %gap : tensor<1x64x1x1xf32>
// CHECK-NEXT:  }
// GENERIC-LABEL: "func.func"() <{sym_name = "cnn", function_type = (tensor<1x3x224x224xf32>, tensor<64x3x7x7xf32>, tensor<64xf32>, tensor<64x1x3x3xf32>, tensor<1x56x56x64xf32>, tensor<32x1x1x64xf32>, tensor<32xf32>) -> tensor<1x64x1x1xf32>}> ({
// GENERIC-NEXT:    ^bb0(%img: tensor<1x3x224x224xf32>, %w: tensor<64x3x7x7xf32>, %b: tensor<64xf32>, %dw: tensor<64x1x3x3xf32>, %nhwc: tensor<1x56x56x64xf32>, %wo: tensor<32x1x1x64xf32>, %b32: tensor<32xf32>):
// GENERIC-NEXT:    %c = "glow.convolution"(%img, %w, %b) {kernels = array<i64: 7, 7>, strides = array<i64: 2, 2>, pads = array<i64: 3, 3, 3, 3>, fused_activation = "relu"} : (tensor<1x3x224x224xf32>, tensor<64x3x7x7xf32>, tensor<64xf32>) -> tensor<1x64x112x112xf32>
// GENERIC-NEXT:    %mp = "glow.max_pool"(%c) {kernels = array<i64: 3, 3>, strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>} : (tensor<1x64x112x112xf32>) -> tensor<1x64x56x56xf32>
// GENERIC-NEXT:    %dwc = "glow.convolution"(%mp, %dw, %b) {kernels = array<i64: 3, 3>, pads = array<i64: 2, 2, 2, 2>, dilation = array<i64: 2, 2>, group = 64 : i64, fused_activation = "clip", fused_activation_args = array<f32: 0.000000e+00, 6.000000e+00>} : (tensor<1x64x56x56xf32>, tensor<64x1x3x3xf32>, tensor<64xf32>) -> tensor<1x64x56x56xf32>
// GENERIC-NEXT:    %ap = "glow.avg_pool"(%dwc) {kernels = array<i64: 2, 2>, strides = array<i64: 2, 2>, count_include_pad = true} : (tensor<1x64x56x56xf32>) -> tensor<1x64x28x28xf32>
// GENERIC-NEXT:    %gap = "glow.adaptive_avg_pool"(%ap) : (tensor<1x64x28x28xf32>) -> tensor<1x64x1x1xf32>
// GENERIC-NEXT:    %bn = "glow.batch_normalization"(%mp, %b, %b, %b, %b) {epsilon = 1.000000e-05 : f32, momentum = 9.000000e-01 : f32} : (tensor<1x64x56x56xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>) -> tensor<1x64x56x56xf32>
// GENERIC-NEXT:    %lrn = "glow.local_response_normalization"(%mp) {half_window_size = 2 : i64, alpha = 1.000000e-04 : f32, beta = 7.500000e-01 : f32, k = 2.000000e+00 : f32} : (tensor<1x64x56x56xf32>) -> tensor<1x64x56x56xf32>
// GENERIC-NEXT:    %s2d = "glow.space_to_depth"(%mp) {block_size = 2 : i64} : (tensor<1x64x56x56xf32>) -> tensor<1x256x28x28xf32>
// GENERIC-NEXT:    %rn = "glow.resize_nearest"(%mp) {scale = array<f32: 1.000000e+00, 1.000000e+00, 2.000000e+00, 2.000000e+00>, coordinate_transformation_mode = "half_pixel", nearest_mode = "round_prefer_ceil"} : (tensor<1x64x56x56xf32>) -> tensor<1x64x112x112xf32>
// GENERIC-NEXT:    %rb = "glow.resize_bilinear"(%mp) {scale = array<f32: 1.000000e+00, 1.000000e+00, 5.000000e-01, 5.000000e-01>} : (tensor<1x64x56x56xf32>) -> tensor<1x64x28x28xf32>
// GENERIC-NEXT:    %nc = "glow.convolution"(%nhwc, %wo, %b32) {kernels = array<i64: 1, 1>, layout = "NHWC"} : (tensor<1x56x56x64xf32>, tensor<32x1x1x64xf32>, tensor<32xf32>) -> tensor<1x56x56x32xf32>
// GENERIC-NEXT:    %np = "glow.max_pool"(%nc) {kernels = array<i64: 2, 2>, strides = array<i64: 2, 2>, layout = "NHWC"} : (tensor<1x56x56x32xf32>) -> tensor<1x28x28x32xf32>
// GENERIC-NEXT:    %mpg = "glow.max_pool_grad"(%c, %mp) {kernels = array<i64: 3, 3>, strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>} : (tensor<1x64x112x112xf32>, tensor<1x64x56x56xf32>) -> tensor<1x64x112x112xf32>
// GENERIC-NEXT:    "func.return"(%gap) : (tensor<1x64x1x1xf32>) -> ()
// GENERIC-NEXT:  }) : () -> ()
func.func @cnn(%img: tensor<1x3x224x224xf32>, %w: tensor<64x3x7x7xf32>, %b: tensor<64xf32>, %dw: tensor<64x1x3x3xf32>, %nhwc: tensor<1x56x56x64xf32>, %wo: tensor<32x1x1x64xf32>, %b32: tensor<32xf32>) -> tensor<1x64x1x1xf32> {
  %c = glow.convolution %img, %w, %b {kernels = array<i64: 7, 7>, strides = array<i64: 2, 2>, pads = array<i64: 3, 3, 3, 3>, fused_activation = "relu"} : (tensor<1x3x224x224xf32>, tensor<64x3x7x7xf32>, tensor<64xf32>) -> tensor<1x64x112x112xf32>
  %mp = glow.max_pool %c {kernels = array<i64: 3, 3>, strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>} : tensor<1x64x112x112xf32> -> tensor<1x64x56x56xf32>
  %dwc = glow.convolution %mp, %dw, %b {kernels = array<i64: 3, 3>, pads = array<i64: 2, 2, 2, 2>, dilation = array<i64: 2, 2>, group = 64 : i64, fused_activation = "clip", fused_activation_args = array<f32: 0.0, 6.0>} : (tensor<1x64x56x56xf32>, tensor<64x1x3x3xf32>, tensor<64xf32>) -> tensor<1x64x56x56xf32>
  %ap = glow.avg_pool %dwc {kernels = array<i64: 2, 2>, strides = array<i64: 2, 2>, count_include_pad = true} : tensor<1x64x56x56xf32> -> tensor<1x64x28x28xf32>
  %gap = glow.adaptive_avg_pool %ap : tensor<1x64x28x28xf32> -> tensor<1x64x1x1xf32>
  %bn = glow.batch_normalization %mp, %b, %b, %b, %b {epsilon = 1.000000e-05 : f32, momentum = 0.899999976 : f32} : (tensor<1x64x56x56xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>) -> tensor<1x64x56x56xf32>
  %lrn = glow.local_response_normalization %mp {half_window_size = 2 : i64, alpha = 9.99999974e-05 : f32, beta = 7.500000e-01 : f32, k = 2.000000e+00 : f32} : tensor<1x64x56x56xf32>
  %s2d = glow.space_to_depth %mp {block_size = 2 : i64} : tensor<1x64x56x56xf32> -> tensor<1x256x28x28xf32>
  %rn = glow.resize_nearest %mp {scale = array<f32: 1.0, 1.0, 2.0, 2.0>, coordinate_transformation_mode = "half_pixel", nearest_mode = "round_prefer_ceil"} : tensor<1x64x56x56xf32> -> tensor<1x64x112x112xf32>
  %rb = glow.resize_bilinear %mp {scale = array<f32: 1.0, 1.0, 0.5, 0.5>} : tensor<1x64x56x56xf32> -> tensor<1x64x28x28xf32>
  %nc = glow.convolution %nhwc, %wo, %b32 {kernels = array<i64: 1, 1>, layout = "NHWC"} : (tensor<1x56x56x64xf32>, tensor<32x1x1x64xf32>, tensor<32xf32>) -> tensor<1x56x56x32xf32>
  %np = glow.max_pool %nc {kernels = array<i64: 2, 2>, strides = array<i64: 2, 2>, layout = "NHWC"} : tensor<1x56x56x32xf32> -> tensor<1x28x28x32xf32>
  %mpg = glow.max_pool_grad %c, %mp {kernels = array<i64: 3, 3>, strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>} : (tensor<1x64x112x112xf32>, tensor<1x64x56x56xf32>) -> tensor<1x64x112x112xf32>
  func.return %gap : tensor<1x64x1x1xf32>
}

// CHECK-LABEL: func.func @dense(%x: tensor<16x512xf32>, %w: tensor<512x1000xf32>, %b: tensor<1000xf32>, %q: tensor<12x64x32xf32>, %k: tensor<12x32x64xf32>, %seq: tensor<2x128x768xf32>, %gamma: tensor<768xf32>) -> tensor<16x1000xf32> {
// CHECK-NEXT:    %fc = glow.fully_connected %x, %w, %b : (tensor<16x512xf32>, tensor<512x1000xf32>, tensor<1000xf32>) -> tensor<16x1000xf32>
// CHECK-NEXT:    %fc2 = glow.fully_connected %x, %w, %b {fused_activation = "leaky_relu", fused_activation_args = array<f32: 1.000000e-01>} : (tensor<16x512xf32>, tensor<512x1000xf32>, tensor<1000xf32>) -> tensor<16x1000xf32>
// CHECK-NEXT:    %mm = glow.mat_mul %x, %w : (tensor<16x512xf32>, tensor<512x1000xf32>) -> tensor<16x1000xf32>
// CHECK-NEXT:    %bmm = glow.batch_mat_mul %q, %k : (tensor<12x64x32xf32>, tensor<12x32x64xf32>) -> tensor<12x64x64xf32>
// CHECK-NEXT:    %ba = glow.batched_add %mm, %b : (tensor<16x1000xf32>, tensor<1000xf32>) -> tensor<16x1000xf32>
// CHECK-NEXT:    %ln = glow.layer_normalization %seq, %gamma, %gamma {epsilon = 1.000000e-12 : f32} : (tensor<2x128x768xf32>, tensor<768xf32>, tensor<768xf32>) -> tensor<2x128x768xf32>
// CHECK-NEXT:    %sm = glow.soft_max %bmm {axis = -1 : i64} : tensor<12x64x64xf32>
// CHECK-NEXT:    %lsm = glow.log_soft_max %fc : tensor<16x1000xf32>
// CHECK-NEXT:    func.return %lsm : tensor<16x1000xf32>
// CHECK-NEXT:  }
// GENERIC-LABEL: "func.func"() <{sym_name = "dense", function_type = (tensor<16x512xf32>, tensor<512x1000xf32>, tensor<1000xf32>, tensor<12x64x32xf32>, tensor<12x32x64xf32>, tensor<2x128x768xf32>, tensor<768xf32>) -> tensor<16x1000xf32>}> ({
// GENERIC-NEXT:    ^bb0(%x: tensor<16x512xf32>, %w: tensor<512x1000xf32>, %b: tensor<1000xf32>, %q: tensor<12x64x32xf32>, %k: tensor<12x32x64xf32>, %seq: tensor<2x128x768xf32>, %gamma: tensor<768xf32>):
// GENERIC-NEXT:    %fc = "glow.fully_connected"(%x, %w, %b) : (tensor<16x512xf32>, tensor<512x1000xf32>, tensor<1000xf32>) -> tensor<16x1000xf32>
// GENERIC-NEXT:    %fc2 = "glow.fully_connected"(%x, %w, %b) {fused_activation = "leaky_relu", fused_activation_args = array<f32: 1.000000e-01>} : (tensor<16x512xf32>, tensor<512x1000xf32>, tensor<1000xf32>) -> tensor<16x1000xf32>
// GENERIC-NEXT:    %mm = "glow.mat_mul"(%x, %w) : (tensor<16x512xf32>, tensor<512x1000xf32>) -> tensor<16x1000xf32>
// GENERIC-NEXT:    %bmm = "glow.batch_mat_mul"(%q, %k) : (tensor<12x64x32xf32>, tensor<12x32x64xf32>) -> tensor<12x64x64xf32>
// GENERIC-NEXT:    %ba = "glow.batched_add"(%mm, %b) : (tensor<16x1000xf32>, tensor<1000xf32>) -> tensor<16x1000xf32>
// GENERIC-NEXT:    %ln = "glow.layer_normalization"(%seq, %gamma, %gamma) {epsilon = 1.000000e-12 : f32} : (tensor<2x128x768xf32>, tensor<768xf32>, tensor<768xf32>) -> tensor<2x128x768xf32>
// GENERIC-NEXT:    %sm = "glow.soft_max"(%bmm) {axis = -1 : i64} : (tensor<12x64x64xf32>) -> tensor<12x64x64xf32>
// GENERIC-NEXT:    %lsm = "glow.log_soft_max"(%fc) : (tensor<16x1000xf32>) -> tensor<16x1000xf32>
// GENERIC-NEXT:    "func.return"(%lsm) : (tensor<16x1000xf32>) -> ()
// GENERIC-NEXT:  }) : () -> ()
func.func @dense(%x: tensor<16x512xf32>, %w: tensor<512x1000xf32>, %b: tensor<1000xf32>, %q: tensor<12x64x32xf32>, %k: tensor<12x32x64xf32>, %seq: tensor<2x128x768xf32>, %gamma: tensor<768xf32>) -> tensor<16x1000xf32> {
  %fc = glow.fully_connected %x, %w, %b : (tensor<16x512xf32>, tensor<512x1000xf32>, tensor<1000xf32>) -> tensor<16x1000xf32>
  %fc2 = glow.fully_connected %x, %w, %b {fused_activation = "leaky_relu", fused_activation_args = array<f32: 0.1>} : (tensor<16x512xf32>, tensor<512x1000xf32>, tensor<1000xf32>) -> tensor<16x1000xf32>
  %mm = glow.mat_mul %x, %w : (tensor<16x512xf32>, tensor<512x1000xf32>) -> tensor<16x1000xf32>
  %bmm = glow.batch_mat_mul %q, %k : (tensor<12x64x32xf32>, tensor<12x32x64xf32>) -> tensor<12x64x64xf32>
  %ba = glow.batched_add %mm, %b : (tensor<16x1000xf32>, tensor<1000xf32>) -> tensor<16x1000xf32>
  %ln = glow.layer_normalization %seq, %gamma, %gamma {epsilon = 9.99999996e-13 : f32} : (tensor<2x128x768xf32>, tensor<768xf32>, tensor<768xf32>) -> tensor<2x128x768xf32>
  %sm = glow.soft_max %bmm {axis = -1 : i64} : tensor<12x64x64xf32>
  %lsm = glow.log_soft_max %fc : tensor<16x1000xf32>
  func.return %lsm : tensor<16x1000xf32>
}

// The cpu backend's packed weights (`gemm_panels`: [K, M] in panels of 64 columns).
// CHECK-LABEL: func.func @gemm_panels(%x: tensor<16x512xf32>, %p: tensor<16x512x64xf32>, %b: tensor<1000xf32>) -> tensor<16x1000xf32> {
// CHECK-NEXT:    %fc = glow.fully_connected %x, %p, %b {gemm_panels = 64 : i64} : (tensor<16x512xf32>, tensor<16x512x64xf32>, tensor<1000xf32>) -> tensor<16x1000xf32>
// CHECK-NEXT:    %mm = glow.mat_mul %x, %p {gemm_panels = 64 : i64} : (tensor<16x512xf32>, tensor<16x512x64xf32>) -> tensor<16x1000xf32>
// CHECK-NEXT:    func.return %mm : tensor<16x1000xf32>
// GENERIC-LABEL: "func.func"() <{sym_name = "gemm_panels"
// GENERIC:    %fc = "glow.fully_connected"(%x, %p, %b) {gemm_panels = 64 : i64} : (tensor<16x512xf32>, tensor<16x512x64xf32>, tensor<1000xf32>) -> tensor<16x1000xf32>
// GENERIC-NEXT:    %mm = "glow.mat_mul"(%x, %p) {gemm_panels = 64 : i64} : (tensor<16x512xf32>, tensor<16x512x64xf32>) -> tensor<16x1000xf32>
func.func @gemm_panels(%x: tensor<16x512xf32>, %p: tensor<16x512x64xf32>, %b: tensor<1000xf32>) -> tensor<16x1000xf32> {
  %fc = glow.fully_connected %x, %p, %b {gemm_panels = 64 : i64} : (tensor<16x512xf32>, tensor<16x512x64xf32>, tensor<1000xf32>) -> tensor<16x1000xf32>
  %mm = glow.mat_mul %x, %p {gemm_panels = 64 : i64} : (tensor<16x512xf32>, tensor<16x512x64xf32>) -> tensor<16x1000xf32>
  func.return %mm : tensor<16x1000xf32>
}

// CHECK-LABEL: func.func @unary(%x: tensor<4x8xf32>, %i: tensor<4x8xi32>, %p: tensor<4x8xi1>, %h: tensor<4x8xf16>) {
// CHECK-NEXT:    %0 = glow.relu %i : tensor<4x8xi32>
// CHECK-NEXT:    %1 = glow.sigmoid %x : tensor<4x8xf32>
// CHECK-NEXT:    %2 = glow.tanh %h : tensor<4x8xf16>
// CHECK-NEXT:    %3 = glow.gelu %x {approximate = "tanh"} : tensor<4x8xf32>
// CHECK-NEXT:    %4 = glow.swish %x : tensor<4x8xf32>
// CHECK-NEXT:    %5 = glow.exp %x : tensor<4x8xf32>
// CHECK-NEXT:    %6 = glow.log %x : tensor<4x8xf32>
// CHECK-NEXT:    %7 = glow.sqrt %x : tensor<4x8xf32>
// CHECK-NEXT:    %8 = glow.rsqrt %x : tensor<4x8xf32>
// CHECK-NEXT:    %9 = glow.erf %x : tensor<4x8xf32>
// CHECK-NEXT:    %10 = glow.abs %i : tensor<4x8xi32>
// CHECK-NEXT:    %11 = glow.neg %i : tensor<4x8xi32>
// CHECK-NEXT:    %12 = glow.floor %x : tensor<4x8xf32>
// CHECK-NEXT:    %13 = glow.ceil %x : tensor<4x8xf32>
// CHECK-NEXT:    %14 = glow.round %x : tensor<4x8xf32>
// CHECK-NEXT:    %15 = glow.reciprocal %x : tensor<4x8xf32>
// CHECK-NEXT:    %16 = glow.sin %x : tensor<4x8xf32>
// CHECK-NEXT:    %17 = glow.cos %x : tensor<4x8xf32>
// CHECK-NEXT:    %18 = glow.not %p : tensor<4x8xi1>
// CHECK-NEXT:    %19 = glow.leaky_relu %x {alpha = 1.000000e-02 : f32} : tensor<4x8xf32>
// CHECK-NEXT:    %20 = glow.clip %x {min = 0.000000e+00 : f32, max = 6.000000e+00 : f32} : tensor<4x8xf32>
// CHECK-NEXT:    %21 = glow.acos %x : tensor<4x8xf32>
// CHECK-NEXT:    %22 = glow.asin %h : tensor<4x8xf16>
// CHECK-NEXT:    %23 = glow.atan %x : tensor<4x8xf32>
// CHECK-NEXT:    func.return
// CHECK-NEXT:  }
// GENERIC-LABEL: "func.func"() <{sym_name = "unary", function_type = (tensor<4x8xf32>, tensor<4x8xi32>, tensor<4x8xi1>, tensor<4x8xf16>) -> ()}> ({
// GENERIC-NEXT:    ^bb0(%x: tensor<4x8xf32>, %i: tensor<4x8xi32>, %p: tensor<4x8xi1>, %h: tensor<4x8xf16>):
// GENERIC-NEXT:    %0 = "glow.relu"(%i) : (tensor<4x8xi32>) -> tensor<4x8xi32>
// GENERIC-NEXT:    %1 = "glow.sigmoid"(%x) : (tensor<4x8xf32>) -> tensor<4x8xf32>
// GENERIC-NEXT:    %2 = "glow.tanh"(%h) : (tensor<4x8xf16>) -> tensor<4x8xf16>
// GENERIC-NEXT:    %3 = "glow.gelu"(%x) {approximate = "tanh"} : (tensor<4x8xf32>) -> tensor<4x8xf32>
// GENERIC-NEXT:    %4 = "glow.swish"(%x) : (tensor<4x8xf32>) -> tensor<4x8xf32>
// GENERIC-NEXT:    %5 = "glow.exp"(%x) : (tensor<4x8xf32>) -> tensor<4x8xf32>
// GENERIC-NEXT:    %6 = "glow.log"(%x) : (tensor<4x8xf32>) -> tensor<4x8xf32>
// GENERIC-NEXT:    %7 = "glow.sqrt"(%x) : (tensor<4x8xf32>) -> tensor<4x8xf32>
// GENERIC-NEXT:    %8 = "glow.rsqrt"(%x) : (tensor<4x8xf32>) -> tensor<4x8xf32>
// GENERIC-NEXT:    %9 = "glow.erf"(%x) : (tensor<4x8xf32>) -> tensor<4x8xf32>
// GENERIC-NEXT:    %10 = "glow.abs"(%i) : (tensor<4x8xi32>) -> tensor<4x8xi32>
// GENERIC-NEXT:    %11 = "glow.neg"(%i) : (tensor<4x8xi32>) -> tensor<4x8xi32>
// GENERIC-NEXT:    %12 = "glow.floor"(%x) : (tensor<4x8xf32>) -> tensor<4x8xf32>
// GENERIC-NEXT:    %13 = "glow.ceil"(%x) : (tensor<4x8xf32>) -> tensor<4x8xf32>
// GENERIC-NEXT:    %14 = "glow.round"(%x) : (tensor<4x8xf32>) -> tensor<4x8xf32>
// GENERIC-NEXT:    %15 = "glow.reciprocal"(%x) : (tensor<4x8xf32>) -> tensor<4x8xf32>
// GENERIC-NEXT:    %16 = "glow.sin"(%x) : (tensor<4x8xf32>) -> tensor<4x8xf32>
// GENERIC-NEXT:    %17 = "glow.cos"(%x) : (tensor<4x8xf32>) -> tensor<4x8xf32>
// GENERIC-NEXT:    %18 = "glow.not"(%p) : (tensor<4x8xi1>) -> tensor<4x8xi1>
// GENERIC-NEXT:    %19 = "glow.leaky_relu"(%x) {alpha = 1.000000e-02 : f32} : (tensor<4x8xf32>) -> tensor<4x8xf32>
// GENERIC-NEXT:    %20 = "glow.clip"(%x) {min = 0.000000e+00 : f32, max = 6.000000e+00 : f32} : (tensor<4x8xf32>) -> tensor<4x8xf32>
// GENERIC-NEXT:    %21 = "glow.acos"(%x) : (tensor<4x8xf32>) -> tensor<4x8xf32>
// GENERIC-NEXT:    %22 = "glow.asin"(%h) : (tensor<4x8xf16>) -> tensor<4x8xf16>
// GENERIC-NEXT:    %23 = "glow.atan"(%x) : (tensor<4x8xf32>) -> tensor<4x8xf32>
// GENERIC-NEXT:    "func.return"() : () -> ()
// GENERIC-NEXT:  }) : () -> ()
func.func @unary(%x: tensor<4x8xf32>, %i: tensor<4x8xi32>, %p: tensor<4x8xi1>, %h: tensor<4x8xf16>) {
  %0 = glow.relu %i : tensor<4x8xi32>
  %1 = glow.sigmoid %x : tensor<4x8xf32>
  %2 = glow.tanh %h : tensor<4x8xf16>
  %3 = glow.gelu %x {approximate = "tanh"} : tensor<4x8xf32>
  %4 = glow.swish %x : tensor<4x8xf32>
  %5 = glow.exp %x : tensor<4x8xf32>
  %6 = glow.log %x : tensor<4x8xf32>
  %7 = glow.sqrt %x : tensor<4x8xf32>
  %8 = glow.rsqrt %x : tensor<4x8xf32>
  %9 = glow.erf %x : tensor<4x8xf32>
  %10 = glow.abs %i : tensor<4x8xi32>
  %11 = glow.neg %i : tensor<4x8xi32>
  %12 = glow.floor %x : tensor<4x8xf32>
  %13 = glow.ceil %x : tensor<4x8xf32>
  %14 = glow.round %x : tensor<4x8xf32>
  %15 = glow.reciprocal %x : tensor<4x8xf32>
  %16 = glow.sin %x : tensor<4x8xf32>
  %17 = glow.cos %x : tensor<4x8xf32>
  %18 = glow.not %p : tensor<4x8xi1>
  %19 = glow.leaky_relu %x {alpha = 0.00999999977 : f32} : tensor<4x8xf32>
  %20 = glow.clip %x {min = 0.0 : f32, max = 6.0 : f32} : tensor<4x8xf32>
  %21 = glow.acos %x : tensor<4x8xf32>
  %22 = glow.asin %h : tensor<4x8xf16>
  %23 = glow.atan %x : tensor<4x8xf32>
  func.return
}

// An op defined by its scalar body (x / (1 + |x|)).
// CHECK-LABEL: func.func @softsign(%x: tensor<4x8xf32>, %h: tensor<4x8xf16>) -> tensor<4x8xf16> {
// CHECK-NEXT:    %0 = glow.softsign %x : tensor<4x8xf32>
// CHECK-NEXT:    %1 = glow.softsign %h : tensor<4x8xf16>
// CHECK-NEXT:    func.return %1 : tensor<4x8xf16>
// CHECK-NEXT:  }
// GENERIC-LABEL: "func.func"() <{sym_name = "softsign", function_type = (tensor<4x8xf32>, tensor<4x8xf16>) -> tensor<4x8xf16>}> ({
// GENERIC-NEXT:    ^bb0(%x: tensor<4x8xf32>, %h: tensor<4x8xf16>):
// GENERIC-NEXT:    %0 = "glow.softsign"(%x) : (tensor<4x8xf32>) -> tensor<4x8xf32>
// GENERIC-NEXT:    %1 = "glow.softsign"(%h) : (tensor<4x8xf16>) -> tensor<4x8xf16>
// GENERIC-NEXT:    "func.return"(%1) : (tensor<4x8xf16>) -> ()
// GENERIC-NEXT:  }) : () -> ()
func.func @softsign(%x: tensor<4x8xf32>, %h: tensor<4x8xf16>) -> tensor<4x8xf16> {
  %0 = glow.softsign %x : tensor<4x8xf32>
  %1 = glow.softsign %h : tensor<4x8xf16>
  func.return %1 : tensor<4x8xf16>
}

// CHECK-LABEL: func.func @binary(%a: tensor<4x8xf32>, %b: tensor<4x8xf32>, %i: tensor<4x8xi64>, %j: tensor<4x8xi64>, %p: tensor<4x8xi1>, %q: tensor<4x8xi1>) -> tensor<4x8xf32> {
// CHECK-NEXT:    %0 = glow.add %a, %b : tensor<4x8xf32>
// CHECK-NEXT:    %1 = glow.sub %a, %b : tensor<4x8xf32>
// CHECK-NEXT:    %2 = glow.mul %a, %b : tensor<4x8xf32>
// CHECK-NEXT:    %3 = glow.div %i, %j : tensor<4x8xi64>
// CHECK-NEXT:    %4 = glow.max %a, %b : tensor<4x8xf32>
// CHECK-NEXT:    %5 = glow.min %i, %j : tensor<4x8xi64>
// CHECK-NEXT:    %6 = glow.pow %a, %b : tensor<4x8xf32>
// CHECK-NEXT:    %7 = glow.and %p, %q : tensor<4x8xi1>
// CHECK-NEXT:    %8 = glow.or %p, %q : tensor<4x8xi1>
// CHECK-NEXT:    %9 = glow.xor %p, %q : tensor<4x8xi1>
// CHECK-NEXT:    %10 = glow.prelu %a, %b : tensor<4x8xf32>
// CHECK-NEXT:    %11 = glow.cmp_eq %i, %j : tensor<4x8xi64> -> tensor<4x8xi1>
// CHECK-NEXT:    %12 = glow.cmp_lt %a, %b : tensor<4x8xf32> -> tensor<4x8xi1>
// CHECK-NEXT:    %13 = glow.cmp_lte %a, %b : tensor<4x8xf32> -> tensor<4x8xi1>
// CHECK-NEXT:    %14 = glow.select %12, %a, %b : tensor<4x8xi1>, tensor<4x8xf32>
// CHECK-NEXT:    func.return %14 : tensor<4x8xf32>
// CHECK-NEXT:  }
// GENERIC-LABEL: "func.func"() <{sym_name = "binary", function_type = (tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xi64>, tensor<4x8xi64>, tensor<4x8xi1>, tensor<4x8xi1>) -> tensor<4x8xf32>}> ({
// GENERIC-NEXT:    ^bb0(%a: tensor<4x8xf32>, %b: tensor<4x8xf32>, %i: tensor<4x8xi64>, %j: tensor<4x8xi64>, %p: tensor<4x8xi1>, %q: tensor<4x8xi1>):
// GENERIC-NEXT:    %0 = "glow.add"(%a, %b) : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
// GENERIC-NEXT:    %1 = "glow.sub"(%a, %b) : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
// GENERIC-NEXT:    %2 = "glow.mul"(%a, %b) : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
// GENERIC-NEXT:    %3 = "glow.div"(%i, %j) : (tensor<4x8xi64>, tensor<4x8xi64>) -> tensor<4x8xi64>
// GENERIC-NEXT:    %4 = "glow.max"(%a, %b) : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
// GENERIC-NEXT:    %5 = "glow.min"(%i, %j) : (tensor<4x8xi64>, tensor<4x8xi64>) -> tensor<4x8xi64>
// GENERIC-NEXT:    %6 = "glow.pow"(%a, %b) : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
// GENERIC-NEXT:    %7 = "glow.and"(%p, %q) : (tensor<4x8xi1>, tensor<4x8xi1>) -> tensor<4x8xi1>
// GENERIC-NEXT:    %8 = "glow.or"(%p, %q) : (tensor<4x8xi1>, tensor<4x8xi1>) -> tensor<4x8xi1>
// GENERIC-NEXT:    %9 = "glow.xor"(%p, %q) : (tensor<4x8xi1>, tensor<4x8xi1>) -> tensor<4x8xi1>
// GENERIC-NEXT:    %10 = "glow.prelu"(%a, %b) : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
// GENERIC-NEXT:    %11 = "glow.cmp_eq"(%i, %j) : (tensor<4x8xi64>, tensor<4x8xi64>) -> tensor<4x8xi1>
// GENERIC-NEXT:    %12 = "glow.cmp_lt"(%a, %b) : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xi1>
// GENERIC-NEXT:    %13 = "glow.cmp_lte"(%a, %b) : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xi1>
// GENERIC-NEXT:    %14 = "glow.select"(%12, %a, %b) : (tensor<4x8xi1>, tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
// GENERIC-NEXT:    "func.return"(%14) : (tensor<4x8xf32>) -> ()
// GENERIC-NEXT:  }) : () -> ()
func.func @binary(%a: tensor<4x8xf32>, %b: tensor<4x8xf32>, %i: tensor<4x8xi64>, %j: tensor<4x8xi64>, %p: tensor<4x8xi1>, %q: tensor<4x8xi1>) -> tensor<4x8xf32> {
  %0 = glow.add %a, %b : tensor<4x8xf32>
  %1 = glow.sub %a, %b : tensor<4x8xf32>
  %2 = glow.mul %a, %b : tensor<4x8xf32>
  %3 = glow.div %i, %j : tensor<4x8xi64>
  %4 = glow.max %a, %b : tensor<4x8xf32>
  %5 = glow.min %i, %j : tensor<4x8xi64>
  %6 = glow.pow %a, %b : tensor<4x8xf32>
  %7 = glow.and %p, %q : tensor<4x8xi1>
  %8 = glow.or %p, %q : tensor<4x8xi1>
  %9 = glow.xor %p, %q : tensor<4x8xi1>
  %10 = glow.prelu %a, %b : tensor<4x8xf32>
  %11 = glow.cmp_eq %i, %j : tensor<4x8xi64> -> tensor<4x8xi1>
  %12 = glow.cmp_lt %a, %b : tensor<4x8xf32> -> tensor<4x8xi1>
  %13 = glow.cmp_lte %a, %b : tensor<4x8xf32> -> tensor<4x8xi1>
  %14 = glow.select %12, %a, %b : tensor<4x8xi1>, tensor<4x8xf32>
  func.return %14 : tensor<4x8xf32>
}

// CHECK-LABEL: func.func @quantized(%x: tensor<1x3x32x32xf32>, %wq: tensor<8x3x3x3x!glow.quant<i8, scale = 0.02, offset = 0>>, %bq: tensor<8xi32>, %u: tensor<16x!glow.quant<ui8, scale = 0.5, offset = 128>>, %s: tensor<16x!glow.quant<i16, scale = 3.0517578125e-05, offset = 0>>) -> tensor<1x8x32x32xf16> {
// CHECK-NEXT:    %xq = glow.quantize %x : tensor<1x3x32x32xf32> -> tensor<1x3x32x32x!glow.quant<i8, scale = 0.0078125, offset = -128>>
// CHECK-NEXT:    %cq = glow.convolution %xq, %wq, %bq {kernels = array<i64: 3, 3>, pads = array<i64: 1, 1, 1, 1>} : (tensor<1x3x32x32x!glow.quant<i8, scale = 0.0078125, offset = -128>>, tensor<8x3x3x3x!glow.quant<i8, scale = 0.02, offset = 0>>, tensor<8xi32>) -> tensor<1x8x32x32x!glow.quant<i8, scale = 0.05, offset = 3>>
// CHECK-NEXT:    %rq = glow.rescale_quantized %cq : tensor<1x8x32x32x!glow.quant<i8, scale = 0.05, offset = 3>> -> tensor<1x8x32x32x!glow.quant<i8, scale = 0.1, offset = 0>>
// CHECK-NEXT:    %rl = glow.relu %rq : tensor<1x8x32x32x!glow.quant<i8, scale = 0.1, offset = 0>>
// CHECK-NEXT:    %dq = glow.dequantize %rl : tensor<1x8x32x32x!glow.quant<i8, scale = 0.1, offset = 0>> -> tensor<1x8x32x32xf32>
// CHECK-NEXT:    %cv = glow.convert_to %dq : tensor<1x8x32x32xf32> -> tensor<1x8x32x32xf16>
// CHECK-NEXT:    %qw = glow.constant dense_resource<q_weights> : tensor<2x4x!glow.quant<i8, scale = 1.0e-05, offset = 0>>
// CHECK-NEXT:    %ur = glow.rescale_quantized %u : tensor<16x!glow.quant<ui8, scale = 0.5, offset = 128>> -> tensor<16x!glow.quant<i32, scale = 0.25, offset = 0>>
// CHECK-NEXT:    %sd = glow.dequantize %s : tensor<16x!glow.quant<i16, scale = 3.0517578125e-05, offset = 0>> -> tensor<16xf32>
// CHECK-NEXT:    func.return %cv : tensor<1x8x32x32xf16>
// CHECK-NEXT:  }
// GENERIC-LABEL: "func.func"() <{sym_name = "quantized", function_type = (tensor<1x3x32x32xf32>, tensor<8x3x3x3x!glow.quant<i8, scale = 0.02, offset = 0>>, tensor<8xi32>, tensor<16x!glow.quant<ui8, scale = 0.5, offset = 128>>, tensor<16x!glow.quant<i16, scale = 3.0517578125e-05, offset = 0>>) -> tensor<1x8x32x32xf16>}> ({
// GENERIC-NEXT:    ^bb0(%x: tensor<1x3x32x32xf32>, %wq: tensor<8x3x3x3x!glow.quant<i8, scale = 0.02, offset = 0>>, %bq: tensor<8xi32>, %u: tensor<16x!glow.quant<ui8, scale = 0.5, offset = 128>>, %s: tensor<16x!glow.quant<i16, scale = 3.0517578125e-05, offset = 0>>):
// GENERIC-NEXT:    %xq = "glow.quantize"(%x) : (tensor<1x3x32x32xf32>) -> tensor<1x3x32x32x!glow.quant<i8, scale = 0.0078125, offset = -128>>
// GENERIC-NEXT:    %cq = "glow.convolution"(%xq, %wq, %bq) {kernels = array<i64: 3, 3>, pads = array<i64: 1, 1, 1, 1>} : (tensor<1x3x32x32x!glow.quant<i8, scale = 0.0078125, offset = -128>>, tensor<8x3x3x3x!glow.quant<i8, scale = 0.02, offset = 0>>, tensor<8xi32>) -> tensor<1x8x32x32x!glow.quant<i8, scale = 0.05, offset = 3>>
// GENERIC-NEXT:    %rq = "glow.rescale_quantized"(%cq) : (tensor<1x8x32x32x!glow.quant<i8, scale = 0.05, offset = 3>>) -> tensor<1x8x32x32x!glow.quant<i8, scale = 0.1, offset = 0>>
// GENERIC-NEXT:    %rl = "glow.relu"(%rq) : (tensor<1x8x32x32x!glow.quant<i8, scale = 0.1, offset = 0>>) -> tensor<1x8x32x32x!glow.quant<i8, scale = 0.1, offset = 0>>
// GENERIC-NEXT:    %dq = "glow.dequantize"(%rl) : (tensor<1x8x32x32x!glow.quant<i8, scale = 0.1, offset = 0>>) -> tensor<1x8x32x32xf32>
// GENERIC-NEXT:    %cv = "glow.convert_to"(%dq) : (tensor<1x8x32x32xf32>) -> tensor<1x8x32x32xf16>
// GENERIC-NEXT:    %qw = "glow.constant"() {value = dense_resource<q_weights> : tensor<2x4x!glow.quant<i8, scale = 1.0e-05, offset = 0>>} : () -> tensor<2x4x!glow.quant<i8, scale = 1.0e-05, offset = 0>>
// GENERIC-NEXT:    %ur = "glow.rescale_quantized"(%u) : (tensor<16x!glow.quant<ui8, scale = 0.5, offset = 128>>) -> tensor<16x!glow.quant<i32, scale = 0.25, offset = 0>>
// GENERIC-NEXT:    %sd = "glow.dequantize"(%s) : (tensor<16x!glow.quant<i16, scale = 3.0517578125e-05, offset = 0>>) -> tensor<16xf32>
// GENERIC-NEXT:    "func.return"(%cv) : (tensor<1x8x32x32xf16>) -> ()
// GENERIC-NEXT:  }) : () -> ()
func.func @quantized(%x: tensor<1x3x32x32xf32>, %wq: tensor<8x3x3x3x!glow.quant<i8, scale = 0.02, offset = 0>>, %bq: tensor<8xi32>, %u: tensor<16x!glow.quant<ui8, scale = 0.5, offset = 128>>, %s: tensor<16x!glow.quant<i16, scale = 3.0517578125e-05, offset = 0>>) -> tensor<1x8x32x32xf16> {
  %xq = glow.quantize %x : tensor<1x3x32x32xf32> -> tensor<1x3x32x32x!glow.quant<i8, scale = 0.0078125, offset = -128>>
  %cq = glow.convolution %xq, %wq, %bq {kernels = array<i64: 3, 3>, pads = array<i64: 1, 1, 1, 1>} : (tensor<1x3x32x32x!glow.quant<i8, scale = 0.0078125, offset = -128>>, tensor<8x3x3x3x!glow.quant<i8, scale = 0.02, offset = 0>>, tensor<8xi32>) -> tensor<1x8x32x32x!glow.quant<i8, scale = 0.05, offset = 3>>
  %rq = glow.rescale_quantized %cq : tensor<1x8x32x32x!glow.quant<i8, scale = 0.05, offset = 3>> -> tensor<1x8x32x32x!glow.quant<i8, scale = 0.1, offset = 0>>
  %rl = glow.relu %rq : tensor<1x8x32x32x!glow.quant<i8, scale = 0.1, offset = 0>>
  %dq = glow.dequantize %rl : tensor<1x8x32x32x!glow.quant<i8, scale = 0.1, offset = 0>> -> tensor<1x8x32x32xf32>
  %cv = glow.convert_to %dq : tensor<1x8x32x32xf32> -> tensor<1x8x32x32xf16>
  %qw = glow.constant dense_resource<q_weights> : tensor<2x4x!glow.quant<i8, scale = 1.0e-05, offset = 0>>
  %ur = glow.rescale_quantized %u : tensor<16x!glow.quant<ui8, scale = 0.5, offset = 128>> -> tensor<16x!glow.quant<i32, scale = 0.25, offset = 0>>
  %sd = glow.dequantize %s : tensor<16x!glow.quant<i16, scale = 3.0517578125e-05, offset = 0>> -> tensor<16xf32>
  func.return %cv : tensor<1x8x32x32xf16>
}

// Per-channel quantized dense ops: an i8 filter (weights) with f32 scales and i32 offsets
// per output channel as operands; an i32 or a float bias.
// CHECK-LABEL: func.func @per_channel(%xq: tensor<1x3x8x8x!glow.quant<i8, scale = 0.0078125, offset = -128>>, %w: tensor<4x3x3x3xi8>, %b: tensor<4xi32>, %s: tensor<4xf32>, %o: tensor<4xi32>, %fq: tensor<2x6x!glow.quant<i8, scale = 0.5, offset = 0>>, %fw: tensor<4x6xi8>, %fb: tensor<4xf32>) -> tensor<1x4x8x8x!glow.quant<i8, scale = 0.05, offset = 3>> {
// CHECK-NEXT:    %cw = glow.channelwise_quantized_convolution %xq, %w, %b, %s, %o {kernels = array<i64: 3, 3>, pads = array<i64: 1, 1, 1, 1>} : (tensor<1x3x8x8x!glow.quant<i8, scale = 0.0078125, offset = -128>>, tensor<4x3x3x3xi8>, tensor<4xi32>, tensor<4xf32>, tensor<4xi32>) -> tensor<1x4x8x8x!glow.quant<i8, scale = 0.05, offset = 3>>
// CHECK-NEXT:    %rw = glow.rowwise_quantized_fully_connected %fq, %fw, %fb, %s, %o : (tensor<2x6x!glow.quant<i8, scale = 0.5, offset = 0>>, tensor<4x6xi8>, tensor<4xf32>, tensor<4xf32>, tensor<4xi32>) -> tensor<2x4x!glow.quant<i8, scale = 0.25, offset = -1>>
// CHECK-NEXT:    func.return %cw : tensor<1x4x8x8x!glow.quant<i8, scale = 0.05, offset = 3>>
// CHECK-NEXT:  }
// GENERIC-LABEL: "func.func"() <{sym_name = "per_channel", function_type = (tensor<1x3x8x8x!glow.quant<i8, scale = 0.0078125, offset = -128>>, tensor<4x3x3x3xi8>, tensor<4xi32>, tensor<4xf32>, tensor<4xi32>, tensor<2x6x!glow.quant<i8, scale = 0.5, offset = 0>>, tensor<4x6xi8>, tensor<4xf32>) -> tensor<1x4x8x8x!glow.quant<i8, scale = 0.05, offset = 3>>}> ({
// GENERIC-NEXT:  ^bb0(%xq: tensor<1x3x8x8x!glow.quant<i8, scale = 0.0078125, offset = -128>>, %w: tensor<4x3x3x3xi8>, %b: tensor<4xi32>, %s: tensor<4xf32>, %o: tensor<4xi32>, %fq: tensor<2x6x!glow.quant<i8, scale = 0.5, offset = 0>>, %fw: tensor<4x6xi8>, %fb: tensor<4xf32>):
// GENERIC-NEXT:    %cw = "glow.channelwise_quantized_convolution"(%xq, %w, %b, %s, %o) {kernels = array<i64: 3, 3>, pads = array<i64: 1, 1, 1, 1>} : (tensor<1x3x8x8x!glow.quant<i8, scale = 0.0078125, offset = -128>>, tensor<4x3x3x3xi8>, tensor<4xi32>, tensor<4xf32>, tensor<4xi32>) -> tensor<1x4x8x8x!glow.quant<i8, scale = 0.05, offset = 3>>
// GENERIC-NEXT:    %rw = "glow.rowwise_quantized_fully_connected"(%fq, %fw, %fb, %s, %o) : (tensor<2x6x!glow.quant<i8, scale = 0.5, offset = 0>>, tensor<4x6xi8>, tensor<4xf32>, tensor<4xf32>, tensor<4xi32>) -> tensor<2x4x!glow.quant<i8, scale = 0.25, offset = -1>>
// GENERIC-NEXT:    "func.return"(%cw) : (tensor<1x4x8x8x!glow.quant<i8, scale = 0.05, offset = 3>>) -> ()
// GENERIC-NEXT:  }) : () -> ()
func.func @per_channel(%xq: tensor<1x3x8x8x!glow.quant<i8, scale = 0.0078125, offset = -128>>, %w: tensor<4x3x3x3xi8>, %b: tensor<4xi32>, %s: tensor<4xf32>, %o: tensor<4xi32>, %fq: tensor<2x6x!glow.quant<i8, scale = 0.5, offset = 0>>, %fw: tensor<4x6xi8>, %fb: tensor<4xf32>) -> tensor<1x4x8x8x!glow.quant<i8, scale = 0.05, offset = 3>> {
  %cw = glow.channelwise_quantized_convolution %xq, %w, %b, %s, %o {kernels = array<i64: 3, 3>, pads = array<i64: 1, 1, 1, 1>} : (tensor<1x3x8x8x!glow.quant<i8, scale = 0.0078125, offset = -128>>, tensor<4x3x3x3xi8>, tensor<4xi32>, tensor<4xf32>, tensor<4xi32>) -> tensor<1x4x8x8x!glow.quant<i8, scale = 0.05, offset = 3>>
  %rw = glow.rowwise_quantized_fully_connected %fq, %fw, %fb, %s, %o : (tensor<2x6x!glow.quant<i8, scale = 0.5, offset = 0>>, tensor<4x6xi8>, tensor<4xf32>, tensor<4xf32>, tensor<4xi32>) -> tensor<2x4x!glow.quant<i8, scale = 0.25, offset = -1>>
  func.return %cw : tensor<1x4x8x8x!glow.quant<i8, scale = 0.05, offset = 3>>
}

// CHECK-LABEL: func.func @lookup_table(%xq: tensor<2x3x!glow.quant<i8, scale = 0.0078125, offset = 0>>, %t: tensor<256xi8>) -> tensor<2x3x!glow.quant<i8, scale = 0.00390625, offset = -128>> {
// CHECK-NEXT:    %lt = glow.int_lookup_table %xq, %t : (tensor<2x3x!glow.quant<i8, scale = 0.0078125, offset = 0>>, tensor<256xi8>) -> tensor<2x3x!glow.quant<i8, scale = 0.00390625, offset = -128>>
// CHECK-NEXT:    func.return %lt
// GENERIC-LABEL: "func.func"() <{sym_name = "lookup_table"
// GENERIC:         %lt = "glow.int_lookup_table"(%xq, %t) : (tensor<2x3x!glow.quant<i8, scale = 0.0078125, offset = 0>>, tensor<256xi8>) -> tensor<2x3x!glow.quant<i8, scale = 0.00390625, offset = -128>>
func.func @lookup_table(%xq: tensor<2x3x!glow.quant<i8, scale = 0.0078125, offset = 0>>, %t: tensor<256xi8>) -> tensor<2x3x!glow.quant<i8, scale = 0.00390625, offset = -128>> {
  %lt = glow.int_lookup_table %xq, %t : (tensor<2x3x!glow.quant<i8, scale = 0.0078125, offset = 0>>, tensor<256xi8>) -> tensor<2x3x!glow.quant<i8, scale = 0.00390625, offset = -128>>
  func.return %lt : tensor<2x3x!glow.quant<i8, scale = 0.00390625, offset = -128>>
}

// CHECK-LABEL: func.func @detection(%x: tensor<2x256x14x14xf32>, %rois: tensor<8x4xf32>, %idx: tensor<8xi64>) -> tensor<8x256x7x7xf32> {
// CHECK-NEXT:    %avg = glow.roi_align %x, %rois, %idx {spatial_scale = 6.250000e-02 : f32, aligned = true} : (tensor<2x256x14x14xf32>, tensor<8x4xf32>, tensor<8xi64>) -> tensor<8x256x7x7xf32>
// CHECK-NEXT:    %max = glow.roi_align %x, %rois, %idx {mode = "max", sampling_ratio = 2 : i64} : (tensor<2x256x14x14xf32>, tensor<8x4xf32>, tensor<8xi64>) -> tensor<8x256x7x7xf32>
// CHECK-NEXT:    func.return %avg : tensor<8x256x7x7xf32>
// CHECK-NEXT:  }
// GENERIC-LABEL: "func.func"() <{sym_name = "detection", function_type = (tensor<2x256x14x14xf32>, tensor<8x4xf32>, tensor<8xi64>) -> tensor<8x256x7x7xf32>}> ({
// GENERIC-NEXT:    ^bb0(%x: tensor<2x256x14x14xf32>, %rois: tensor<8x4xf32>, %idx: tensor<8xi64>):
// GENERIC-NEXT:    %avg = "glow.roi_align"(%x, %rois, %idx) {spatial_scale = 6.250000e-02 : f32, aligned = true} : (tensor<2x256x14x14xf32>, tensor<8x4xf32>, tensor<8xi64>) -> tensor<8x256x7x7xf32>
// GENERIC-NEXT:    %max = "glow.roi_align"(%x, %rois, %idx) {mode = "max", sampling_ratio = 2 : i64} : (tensor<2x256x14x14xf32>, tensor<8x4xf32>, tensor<8xi64>) -> tensor<8x256x7x7xf32>
// GENERIC-NEXT:    "func.return"(%avg) : (tensor<8x256x7x7xf32>) -> ()
// GENERIC-NEXT:  }) : () -> ()
func.func @detection(%x: tensor<2x256x14x14xf32>, %rois: tensor<8x4xf32>, %idx: tensor<8xi64>) -> tensor<8x256x7x7xf32> {
  %avg = glow.roi_align %x, %rois, %idx {spatial_scale = 0.0625 : f32, aligned = true} : (tensor<2x256x14x14xf32>, tensor<8x4xf32>, tensor<8xi64>) -> tensor<8x256x7x7xf32>
  %max = glow.roi_align %x, %rois, %idx {mode = "max", sampling_ratio = 2 : i64} : (tensor<2x256x14x14xf32>, tensor<8x4xf32>, tensor<8xi64>) -> tensor<8x256x7x7xf32>
  func.return %avg : tensor<8x256x7x7xf32>
}

// CHECK-LABEL: func.func @bounded(%m: tensor<3x5xi1>) -> (tensor<2x15xi64>, tensor<i64>) {
// CHECK-NEXT:    %nz, %count = glow.non_zero %m : (tensor<3x5xi1>) -> (tensor<2x15xi64>, tensor<i64>)
// CHECK-NEXT:    func.return %nz, %count : tensor<2x15xi64>, tensor<i64>
// CHECK-NEXT:  }
// GENERIC-LABEL: "func.func"() <{sym_name = "bounded", function_type = (tensor<3x5xi1>) -> (tensor<2x15xi64>, tensor<i64>)}> ({
// GENERIC-NEXT:    ^bb0(%m: tensor<3x5xi1>):
// GENERIC-NEXT:    %nz, %count = "glow.non_zero"(%m) : (tensor<3x5xi1>) -> (tensor<2x15xi64>, tensor<i64>)
// GENERIC-NEXT:    "func.return"(%nz, %count) : (tensor<2x15xi64>, tensor<i64>) -> ()
// GENERIC-NEXT:  }) : () -> ()
func.func @bounded(%m: tensor<3x5xi1>) -> (tensor<2x15xi64>, tensor<i64>) {
  %nz, %count = glow.non_zero %m : (tensor<3x5xi1>) -> (tensor<2x15xi64>, tensor<i64>)
  func.return %nz, %count : tensor<2x15xi64>, tensor<i64>
}

// CHECK-LABEL: func.func @nms(%boxes: tensor<1x6x4xf32>, %scores: tensor<1x2x6xf32>, %max: tensor<1xi64>, %iou: tensor<1xf32>, %thr: tensor<1xf32>) -> (tensor<12x3xi64>, tensor<i64>) {
// CHECK-NEXT:    %sel, %count = glow.non_max_suppression %boxes, %scores, %max, %iou, %thr {center_point_box = 1 : i64, use_score_threshold = false} : (tensor<1x6x4xf32>, tensor<1x2x6xf32>, tensor<1xi64>, tensor<1xf32>, tensor<1xf32>) -> (tensor<12x3xi64>, tensor<i64>)
// CHECK-NEXT:    func.return %sel, %count : tensor<12x3xi64>, tensor<i64>
// CHECK-NEXT:  }
// GENERIC-LABEL: "func.func"() <{sym_name = "nms", function_type = (tensor<1x6x4xf32>, tensor<1x2x6xf32>, tensor<1xi64>, tensor<1xf32>, tensor<1xf32>) -> (tensor<12x3xi64>, tensor<i64>)}> ({
// GENERIC-NEXT:    ^bb0(%boxes: tensor<1x6x4xf32>, %scores: tensor<1x2x6xf32>, %max: tensor<1xi64>, %iou: tensor<1xf32>, %thr: tensor<1xf32>):
// GENERIC-NEXT:    %sel, %count = "glow.non_max_suppression"(%boxes, %scores, %max, %iou, %thr) {center_point_box = 1 : i64, use_score_threshold = false} : (tensor<1x6x4xf32>, tensor<1x2x6xf32>, tensor<1xi64>, tensor<1xf32>, tensor<1xf32>) -> (tensor<12x3xi64>, tensor<i64>)
// GENERIC-NEXT:    "func.return"(%sel, %count) : (tensor<12x3xi64>, tensor<i64>) -> ()
// GENERIC-NEXT:  }) : () -> ()
func.func @nms(%boxes: tensor<1x6x4xf32>, %scores: tensor<1x2x6xf32>, %max: tensor<1xi64>, %iou: tensor<1xf32>, %thr: tensor<1xf32>) -> (tensor<12x3xi64>, tensor<i64>) {
  %sel, %count = glow.non_max_suppression %boxes, %scores, %max, %iou, %thr {center_point_box = 1 : i64, use_score_threshold = false} : (tensor<1x6x4xf32>, tensor<1x2x6xf32>, tensor<1xi64>, tensor<1xf32>, tensor<1xf32>) -> (tensor<12x3xi64>, tensor<i64>)
  func.return %sel, %count : tensor<12x3xi64>, tensor<i64>
}

// Control flow (glow.if, glow.yield): results of two branches, a nested if, outer values
// used directly in the branches, a one-element rank-1 condition.
// CHECK-LABEL: func.func @control_flow(%c: tensor<1xi1>, %x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
// CHECK-NEXT:    %r, %r_1 = glow.if %c : tensor<1xi1> -> (tensor<4xf32>, tensor<4xf32>) {
// CHECK-NEXT:      %a = glow.relu %x : tensor<4xf32>
// CHECK-NEXT:      %n = glow.if %c : tensor<1xi1> -> (tensor<4xf32>) {
// CHECK-NEXT:        glow.yield %a : tensor<4xf32>
// CHECK-NEXT:      } else {
// CHECK-NEXT:        glow.yield %x : tensor<4xf32>
// CHECK-NEXT:      }
// CHECK-NEXT:      glow.yield %a, %n : tensor<4xf32>, tensor<4xf32>
// CHECK-NEXT:    } else {
// CHECK-NEXT:      glow.yield %x, %x : tensor<4xf32>, tensor<4xf32>
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return %r, %r_1 : tensor<4xf32>, tensor<4xf32>
// GENERIC-LABEL: sym_name = "control_flow"
// GENERIC:         %r, %r_1 = "glow.if"(%c) ({
// GENERIC:             "glow.yield"(%a) : (tensor<4xf32>) -> ()
// GENERIC-NEXT:      }, {
// GENERIC:         }) : (tensor<1xi1>) -> (tensor<4xf32>, tensor<4xf32>)
func.func @control_flow(%c: tensor<1xi1>, %x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %r:2 = glow.if %c : tensor<1xi1> -> (tensor<4xf32>, tensor<4xf32>) {
    %a = glow.relu %x : tensor<4xf32>
    %n = glow.if %c : tensor<1xi1> -> (tensor<4xf32>) {
      glow.yield %a : tensor<4xf32>
    } else {
      glow.yield %x : tensor<4xf32>
    }
    glow.yield %a, %n : tensor<4xf32>, tensor<4xf32>
  } else {
    glow.yield %x, %x : tensor<4xf32>, tensor<4xf32>
  }
  func.return %r#0, %r#1 : tensor<4xf32>, tensor<4xf32>
}

// glow.loop: the trip count, the condition, the carried values; the body takes the
// iteration number and the carried values and yields the condition and their next values.
// CHECK-LABEL: func.func @loop(%m: tensor<i64>, %c: tensor<i1>, %x: tensor<4xf32>) -> tensor<4xf32> {
// CHECK-NEXT:    %r = glow.loop %m, %c, %x : tensor<i64>, tensor<i1>, tensor<4xf32> -> (tensor<4xf32>) {
// CHECK-NEXT:    ^bb0(%i: tensor<i64>, %v: tensor<4xf32>):
// CHECK-NEXT:      %n = glow.tanh %v : tensor<4xf32>
// CHECK-NEXT:      %s = glow.batched_reduce_add %n {axes = array<i64: 0>} : tensor<4xf32> -> tensor<f32>
// CHECK-NEXT:      %z = glow.splat {value = 0.000000e+00 : f32} : tensor<f32>
// CHECK-NEXT:      %k = glow.cmp_lt %z, %s : tensor<f32> -> tensor<i1>
// CHECK-NEXT:      glow.yield %k, %n : tensor<i1>, tensor<4xf32>
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return %r : tensor<4xf32>
// GENERIC-LABEL: sym_name = "loop"
// GENERIC:         %r = "glow.loop"(%m, %c, %x) ({
// GENERIC-NEXT:    ^bb0(%i: tensor<i64>, %v: tensor<4xf32>):
// GENERIC:         }) : (tensor<i64>, tensor<i1>, tensor<4xf32>) -> tensor<4xf32>
func.func @loop(%m: tensor<i64>, %c: tensor<i1>, %x: tensor<4xf32>) -> tensor<4xf32> {
  %r = glow.loop %m, %c, %x : tensor<i64>, tensor<i1>, tensor<4xf32> -> (tensor<4xf32>) {
  ^bb0(%i: tensor<i64>, %v: tensor<4xf32>):
    %n = glow.tanh %v : tensor<4xf32>
    %s = glow.batched_reduce_add %n {axes = array<i64: 0>} : tensor<4xf32> -> tensor<f32>
    %z = glow.splat {value = 0.0 : f32} : tensor<f32>
    %k = glow.cmp_lt %z, %s : tensor<f32> -> tensor<i1>
    glow.yield %k, %n : tensor<i1>, tensor<4xf32>
  }
  func.return %r : tensor<4xf32>
}

// The bitwise ops on integers (and, or, xor, not also take i1) and the shifts.
// CHECK-LABEL: func.func @bitwise(%i: tensor<4x8xui8>, %j: tensor<4x8xui8>) -> tensor<4x8xui8> {
// CHECK-NEXT:    %0 = glow.and %i, %j : tensor<4x8xui8>
// CHECK-NEXT:    %1 = glow.or %0, %j : tensor<4x8xui8>
// CHECK-NEXT:    %2 = glow.xor %1, %j : tensor<4x8xui8>
// CHECK-NEXT:    %3 = glow.not %2 : tensor<4x8xui8>
// CHECK-NEXT:    %4 = glow.shift_left %3, %j : tensor<4x8xui8>
// CHECK-NEXT:    %5 = glow.shift_right %4, %j : tensor<4x8xui8>
// CHECK-NEXT:    func.return %5 : tensor<4x8xui8>
// GENERIC:       "glow.shift_left"(%3, %j) : (tensor<4x8xui8>, tensor<4x8xui8>) -> tensor<4x8xui8>
// GENERIC-NEXT:  "glow.shift_right"(%4, %j) : (tensor<4x8xui8>, tensor<4x8xui8>) -> tensor<4x8xui8>
func.func @bitwise(%i: tensor<4x8xui8>, %j: tensor<4x8xui8>) -> tensor<4x8xui8> {
  %0 = glow.and %i, %j : tensor<4x8xui8>
  %1 = glow.or %0, %j : tensor<4x8xui8>
  %2 = glow.xor %1, %j : tensor<4x8xui8>
  %3 = glow.not %2 : tensor<4x8xui8>
  %4 = glow.shift_left %3, %j : tensor<4x8xui8>
  %5 = glow.shift_right %4, %j : tensor<4x8xui8>
  func.return %5 : tensor<4x8xui8>
}

// The blobs are printed back byte for byte (MLIR's blob text: a little-endian u32
// alignment, then the raw little-endian data).
// CHECK:       {-#
// CHECK-NEXT:    dialect_resources: {
// CHECK-NEXT:      builtin: {
// CHECK-DAG:         fc_weights: "0x040000000000c0bf0000a0bf000080bf000040bf000000bf000080be000000000000803e0000003f0000403f0000803f0000a03f"
// CHECK-DAG:         q_weights: "0x0100000080ff00010203407f"
// CHECK:           }
// CHECK-NEXT:    }
// CHECK-NEXT:  #-}
// GENERIC:       {-#
// GENERIC-NEXT:    dialect_resources: {
// GENERIC-NEXT:      builtin: {
// GENERIC-DAG:         fc_weights: "0x040000000000c0bf0000a0bf000080bf000040bf000000bf000080be000000000000803e0000003f0000403f0000803f0000a03f"
// GENERIC-DAG:         q_weights: "0x0100000080ff00010203407f"
// GENERIC:           }
// GENERIC-NEXT:    }
// GENERIC-NEXT:  #-}
{-#
  dialect_resources: {
    builtin: {
      fc_weights: "0x040000000000c0bf0000a0bf000080bf000040bf000000bf000080be000000000000803e0000003f0000403f0000803f0000a03f",
      q_weights: "0x0100000080ff00010203407f"
    }
  }
#-}
