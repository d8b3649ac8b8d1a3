// fuse-layer-norm: a layer normalization as exporters before opset 17 wrote it (reduce
// mean, sub, pow 2, reduce mean, add eps, sqrt, div, mul gamma, add beta; the graph
// passes have folded the gamma/beta broadcasts) becomes one glow.layer_normalization.
// It must not fire when the ops compute something else (a cube), or when a piece is
// also read outside the pattern.
// RUN: glow-opt %s --split-input-file -p fuse-layer-norm | FileCheck %s

// CHECK-LABEL: func.func @decomposed
// CHECK-NOT:     glow.batched_reduce_mean
// CHECK:         %[[Y:.*]] = glow.layer_normalization %x, %{{.*}}, %{{.*}} {epsilon = 1.000000e-05 : f32}
// CHECK-NOT:     glow.batched_reduce_mean
// CHECK:         func.return %[[Y]]
func.func @decomposed(%x: tensor<2x4x8xf32>) -> tensor<2x4x8xf32> {
  %0 = glow.batched_reduce_mean %x {axes = array<i64: 2>} : tensor<2x4x8xf32> -> tensor<2x4xf32>
  %mean = glow.reshape %0 : tensor<2x4xf32> -> tensor<2x4x1xf32>
  %1 = glow.broadcast %mean {axis = 0 : i64} : tensor<2x4x1xf32> -> tensor<2x4x8xf32>
  %c = glow.sub %x, %1 : tensor<2x4x8xf32>
  %2 = glow.splat {value = 2.000000e+00 : f32} : tensor<2x4x8xf32>
  %sq = glow.pow %c, %2 : tensor<2x4x8xf32>
  %3 = glow.batched_reduce_mean %sq {axes = array<i64: 2>} : tensor<2x4x8xf32> -> tensor<2x4xf32>
  %var = glow.reshape %3 : tensor<2x4xf32> -> tensor<2x4x1xf32>
  %4 = glow.constant dense<1.000000e-05> : tensor<2x4x1xf32>
  %ve = glow.add %var, %4 : tensor<2x4x1xf32>
  %std = glow.sqrt %ve : tensor<2x4x1xf32>
  %5 = glow.broadcast %std {axis = 0 : i64} : tensor<2x4x1xf32> -> tensor<2x4x8xf32>
  %n = glow.div %c, %5 : tensor<2x4x8xf32>
  %6 = glow.splat {value = 1.500000e+00 : f32} : tensor<2x4x8xf32>
  %s = glow.mul %n, %6 : tensor<2x4x8xf32>
  %7 = glow.splat {value = 5.000000e-01 : f32} : tensor<2x4x8xf32>
  %y = glow.add %s, %7 : tensor<2x4x8xf32>
  func.return %y : tensor<2x4x8xf32>
}

// -----

// A cube is no variance: left alone.
// CHECK-LABEL: func.func @cubed
// CHECK:         glow.pow
// CHECK-NOT:     glow.layer_normalization
func.func @cubed(%x: tensor<2x4x8xf32>) -> tensor<2x4x8xf32> {
  %0 = glow.batched_reduce_mean %x {axes = array<i64: 2>} : tensor<2x4x8xf32> -> tensor<2x4xf32>
  %mean = glow.reshape %0 : tensor<2x4xf32> -> tensor<2x4x1xf32>
  %1 = glow.broadcast %mean {axis = 0 : i64} : tensor<2x4x1xf32> -> tensor<2x4x8xf32>
  %c = glow.sub %x, %1 : tensor<2x4x8xf32>
  %2 = glow.splat {value = 3.000000e+00 : f32} : tensor<2x4x8xf32>
  %sq = glow.pow %c, %2 : tensor<2x4x8xf32>
  %3 = glow.batched_reduce_mean %sq {axes = array<i64: 2>} : tensor<2x4x8xf32> -> tensor<2x4xf32>
  %var = glow.reshape %3 : tensor<2x4xf32> -> tensor<2x4x1xf32>
  %4 = glow.constant dense<1.000000e-05> : tensor<2x4x1xf32>
  %ve = glow.add %var, %4 : tensor<2x4x1xf32>
  %std = glow.sqrt %ve : tensor<2x4x1xf32>
  %5 = glow.broadcast %std {axis = 0 : i64} : tensor<2x4x1xf32> -> tensor<2x4x8xf32>
  %n = glow.div %c, %5 : tensor<2x4x8xf32>
  %6 = glow.splat {value = 1.500000e+00 : f32} : tensor<2x4x8xf32>
  %s = glow.mul %n, %6 : tensor<2x4x8xf32>
  %7 = glow.splat {value = 5.000000e-01 : f32} : tensor<2x4x8xf32>
  %y = glow.add %s, %7 : tensor<2x4x8xf32>
  func.return %y : tensor<2x4x8xf32>
}

// -----

// The centred values are a second result: the pieces stay.
// CHECK-LABEL: func.func @centred_read_outside
// CHECK:         glow.batched_reduce_mean
// CHECK-NOT:     glow.layer_normalization
func.func @centred_read_outside(%x: tensor<2x4x8xf32>) -> (tensor<2x4x8xf32>, tensor<2x4x8xf32>) {
  %0 = glow.batched_reduce_mean %x {axes = array<i64: 2>} : tensor<2x4x8xf32> -> tensor<2x4xf32>
  %mean = glow.reshape %0 : tensor<2x4xf32> -> tensor<2x4x1xf32>
  %1 = glow.broadcast %mean {axis = 0 : i64} : tensor<2x4x1xf32> -> tensor<2x4x8xf32>
  %c = glow.sub %x, %1 : tensor<2x4x8xf32>
  %2 = glow.splat {value = 2.000000e+00 : f32} : tensor<2x4x8xf32>
  %sq = glow.pow %c, %2 : tensor<2x4x8xf32>
  %3 = glow.batched_reduce_mean %sq {axes = array<i64: 2>} : tensor<2x4x8xf32> -> tensor<2x4xf32>
  %var = glow.reshape %3 : tensor<2x4xf32> -> tensor<2x4x1xf32>
  %4 = glow.constant dense<1.000000e-05> : tensor<2x4x1xf32>
  %ve = glow.add %var, %4 : tensor<2x4x1xf32>
  %std = glow.sqrt %ve : tensor<2x4x1xf32>
  %5 = glow.broadcast %std {axis = 0 : i64} : tensor<2x4x1xf32> -> tensor<2x4x8xf32>
  %n = glow.div %c, %5 : tensor<2x4x8xf32>
  %6 = glow.splat {value = 1.500000e+00 : f32} : tensor<2x4x8xf32>
  %s = glow.mul %n, %6 : tensor<2x4x8xf32>
  %7 = glow.splat {value = 5.000000e-01 : f32} : tensor<2x4x8xf32>
  %y = glow.add %s, %7 : tensor<2x4x8xf32>
  func.return %y, %c : tensor<2x4x8xf32>, tensor<2x4x8xf32>
}

// -----

// nn.LayerNorm(bias=False) as torch exports it: no add; the bias is a row of zeros.
// CHECK-LABEL: func.func @no_bias
// CHECK-NOT:     glow.batched_reduce_mean
// CHECK-DAG:     %[[G:.*]] = glow.constant dense<1.500000e+00> : tensor<8xf32>
// CHECK-DAG:     %[[B:.*]] = glow.constant dense<0.000000e+00> : tensor<8xf32>
// CHECK:         %[[Y:.*]] = glow.layer_normalization %x, %[[G]], %[[B]] {epsilon = 1.000000e-05 : f32}
// CHECK-NOT:     glow.mul
// CHECK:         func.return %[[Y]]
func.func @no_bias(%x: tensor<2x4x8xf32>) -> tensor<2x4x8xf32> {
  %0 = glow.batched_reduce_mean %x {axes = array<i64: 2>} : tensor<2x4x8xf32> -> tensor<2x4xf32>
  %mean = glow.reshape %0 : tensor<2x4xf32> -> tensor<2x4x1xf32>
  %1 = glow.broadcast %mean {axis = 0 : i64} : tensor<2x4x1xf32> -> tensor<2x4x8xf32>
  %c = glow.sub %x, %1 : tensor<2x4x8xf32>
  %2 = glow.splat {value = 2.000000e+00 : f32} : tensor<2x4x8xf32>
  %sq = glow.pow %c, %2 : tensor<2x4x8xf32>
  %3 = glow.batched_reduce_mean %sq {axes = array<i64: 2>} : tensor<2x4x8xf32> -> tensor<2x4xf32>
  %var = glow.reshape %3 : tensor<2x4xf32> -> tensor<2x4x1xf32>
  %4 = glow.constant dense<1.000000e-05> : tensor<2x4x1xf32>
  %ve = glow.add %var, %4 : tensor<2x4x1xf32>
  %std = glow.sqrt %ve : tensor<2x4x1xf32>
  %5 = glow.broadcast %std {axis = 0 : i64} : tensor<2x4x1xf32> -> tensor<2x4x8xf32>
  %n = glow.div %c, %5 : tensor<2x4x8xf32>
  %6 = glow.splat {value = 1.500000e+00 : f32} : tensor<2x4x8xf32>
  %y = glow.mul %n, %6 : tensor<2x4x8xf32>
  func.return %y : tensor<2x4x8xf32>
}

// -----

// nn.LayerNorm(elementwise_affine=False): it ends at the div; scale ones, bias zeros.
// CHECK-LABEL: func.func @no_scale_no_bias
// CHECK-NOT:     glow.batched_reduce_mean
// CHECK-DAG:     %[[G:.*]] = glow.constant dense<1.000000e+00> : tensor<8xf32>
// CHECK-DAG:     %[[B:.*]] = glow.constant dense<0.000000e+00> : tensor<8xf32>
// CHECK:         %[[Y:.*]] = glow.layer_normalization %x, %[[G]], %[[B]] {epsilon = 1.000000e-05 : f32}
// CHECK-NOT:     glow.div
// CHECK:         func.return %[[Y]]
func.func @no_scale_no_bias(%x: tensor<2x4x8xf32>) -> tensor<2x4x8xf32> {
  %0 = glow.batched_reduce_mean %x {axes = array<i64: 2>} : tensor<2x4x8xf32> -> tensor<2x4xf32>
  %mean = glow.reshape %0 : tensor<2x4xf32> -> tensor<2x4x1xf32>
  %1 = glow.broadcast %mean {axis = 0 : i64} : tensor<2x4x1xf32> -> tensor<2x4x8xf32>
  %c = glow.sub %x, %1 : tensor<2x4x8xf32>
  %sq = glow.mul %c, %c : tensor<2x4x8xf32>
  %3 = glow.batched_reduce_mean %sq {axes = array<i64: 2>} : tensor<2x4x8xf32> -> tensor<2x4xf32>
  %var = glow.reshape %3 : tensor<2x4xf32> -> tensor<2x4x1xf32>
  %4 = glow.constant dense<1.000000e-05> : tensor<2x4x1xf32>
  %ve = glow.add %var, %4 : tensor<2x4x1xf32>
  %std = glow.sqrt %ve : tensor<2x4x1xf32>
  %5 = glow.broadcast %std {axis = 0 : i64} : tensor<2x4x1xf32> -> tensor<2x4x8xf32>
  %y = glow.div %c, %5 : tensor<2x4x8xf32>
  func.return %y : tensor<2x4x8xf32>
}

// -----

// A shift without a scale: the bias row is kept, the scale is ones.
// CHECK-LABEL: func.func @no_scale
// CHECK-DAG:     %[[G:.*]] = glow.constant dense<1.000000e+00> : tensor<8xf32>
// CHECK-DAG:     %[[B:.*]] = glow.constant dense<5.000000e-01> : tensor<8xf32>
// CHECK:         %[[Y:.*]] = glow.layer_normalization %x, %[[G]], %[[B]]
// CHECK-NOT:     glow.add
// CHECK:         func.return %[[Y]]
func.func @no_scale(%x: tensor<2x4x8xf32>) -> tensor<2x4x8xf32> {
  %0 = glow.batched_reduce_mean %x {axes = array<i64: 2>} : tensor<2x4x8xf32> -> tensor<2x4xf32>
  %mean = glow.reshape %0 : tensor<2x4xf32> -> tensor<2x4x1xf32>
  %1 = glow.broadcast %mean {axis = 0 : i64} : tensor<2x4x1xf32> -> tensor<2x4x8xf32>
  %c = glow.sub %x, %1 : tensor<2x4x8xf32>
  %sq = glow.mul %c, %c : tensor<2x4x8xf32>
  %3 = glow.batched_reduce_mean %sq {axes = array<i64: 2>} : tensor<2x4x8xf32> -> tensor<2x4xf32>
  %var = glow.reshape %3 : tensor<2x4xf32> -> tensor<2x4x1xf32>
  %4 = glow.constant dense<1.000000e-05> : tensor<2x4x1xf32>
  %ve = glow.add %var, %4 : tensor<2x4x1xf32>
  %std = glow.sqrt %ve : tensor<2x4x1xf32>
  %5 = glow.broadcast %std {axis = 0 : i64} : tensor<2x4x1xf32> -> tensor<2x4x8xf32>
  %n = glow.div %c, %5 : tensor<2x4x8xf32>
  %7 = glow.splat {value = 5.000000e-01 : f32} : tensor<2x4x8xf32>
  %y = glow.add %n, %7 : tensor<2x4x8xf32>
  func.return %y : tensor<2x4x8xf32>
}

// -----

// A scale that is an argument, not a constant: fused up to the div, the mul stays after it.
// CHECK-LABEL: func.func @scale_not_constant
// CHECK-NOT:     glow.batched_reduce_mean
// CHECK:         %[[N:.*]] = glow.layer_normalization %x
// CHECK:         %[[Y:.*]] = glow.mul %[[N]], %g
// CHECK:         func.return %[[Y]]
func.func @scale_not_constant(%x: tensor<2x4x8xf32>, %g: tensor<2x4x8xf32>) -> tensor<2x4x8xf32> {
  %0 = glow.batched_reduce_mean %x {axes = array<i64: 2>} : tensor<2x4x8xf32> -> tensor<2x4xf32>
  %mean = glow.reshape %0 : tensor<2x4xf32> -> tensor<2x4x1xf32>
  %1 = glow.broadcast %mean {axis = 0 : i64} : tensor<2x4x1xf32> -> tensor<2x4x8xf32>
  %c = glow.sub %x, %1 : tensor<2x4x8xf32>
  %sq = glow.mul %c, %c : tensor<2x4x8xf32>
  %3 = glow.batched_reduce_mean %sq {axes = array<i64: 2>} : tensor<2x4x8xf32> -> tensor<2x4xf32>
  %var = glow.reshape %3 : tensor<2x4xf32> -> tensor<2x4x1xf32>
  %4 = glow.constant dense<1.000000e-05> : tensor<2x4x1xf32>
  %ve = glow.add %var, %4 : tensor<2x4x1xf32>
  %std = glow.sqrt %ve : tensor<2x4x1xf32>
  %5 = glow.broadcast %std {axis = 0 : i64} : tensor<2x4x1xf32> -> tensor<2x4x8xf32>
  %n = glow.div %c, %5 : tensor<2x4x8xf32>
  %y = glow.mul %n, %g : tensor<2x4x8xf32>
  func.return %y : tensor<2x4x8xf32>
}

// -----

// Without scale and bias, the std read twice: the pieces stay.
// CHECK-LABEL: func.func @no_affine_std_read_outside
// CHECK:         glow.batched_reduce_mean
// CHECK-NOT:     glow.layer_normalization
func.func @no_affine_std_read_outside(%x: tensor<2x4x8xf32>) -> (tensor<2x4x8xf32>, tensor<2x4x1xf32>) {
  %0 = glow.batched_reduce_mean %x {axes = array<i64: 2>} : tensor<2x4x8xf32> -> tensor<2x4xf32>
  %mean = glow.reshape %0 : tensor<2x4xf32> -> tensor<2x4x1xf32>
  %1 = glow.broadcast %mean {axis = 0 : i64} : tensor<2x4x1xf32> -> tensor<2x4x8xf32>
  %c = glow.sub %x, %1 : tensor<2x4x8xf32>
  %sq = glow.mul %c, %c : tensor<2x4x8xf32>
  %3 = glow.batched_reduce_mean %sq {axes = array<i64: 2>} : tensor<2x4x8xf32> -> tensor<2x4xf32>
  %var = glow.reshape %3 : tensor<2x4xf32> -> tensor<2x4x1xf32>
  %4 = glow.constant dense<1.000000e-05> : tensor<2x4x1xf32>
  %ve = glow.add %var, %4 : tensor<2x4x1xf32>
  %std = glow.sqrt %ve : tensor<2x4x1xf32>
  %5 = glow.broadcast %std {axis = 0 : i64} : tensor<2x4x1xf32> -> tensor<2x4x8xf32>
  %y = glow.div %c, %5 : tensor<2x4x8xf32>
  func.return %y, %std : tensor<2x4x8xf32>, tensor<2x4x1xf32>
}
