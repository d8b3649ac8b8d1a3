// RUN: glow-opt %s --split-input-file -p 'quantize-graph{profile="%S/../inputs/quantize-graph-profile.json"}' | FileCheck %s
// RUN: glow-opt %s --split-input-file -p 'quantize-graph{profile="%S/../inputs/quantize-graph-profile.json" keep-float=sigmoid}' | FileCheck %s --check-prefix=KEEP

// sigmoid and tanh have no int8 kernel: each becomes a glow.int_lookup_table, from x's
// type (its profile [-1, 1]: 2/255, offset 0) to its own ([0, 1] for sg: 1/255, offset
// -128; [-1, 1] for th). The table holds the float op at each stored input, lowest first:
// stored -128 is x = -1.0039, sigmoid 0.2681 = 68.4 / 255, stored 68 - 128 = -60 (0xc4);
// tanh -0.7635 = -97.3 * 2/255, stored -97 (0x9f).
// CHECK-LABEL: func.func @sigmoid_tanh
// CHECK-NEXT:    %[[X0:.*]] = glow.quantize %x : tensor<2x3xf32> -> tensor<2x3x!glow.quant<i8, scale = 0.007843137718737125, offset = 0>>
// CHECK-NEXT:    %[[T0:.*]] = glow.constant dense_resource<qtable> : tensor<256xi8>
// CHECK-NEXT:    %sg = glow.int_lookup_table %[[X0]], %[[T0]] : (tensor<2x3x!glow.quant<i8, scale = 0.007843137718737125, offset = 0>>, tensor<256xi8>) -> tensor<2x3x!glow.quant<i8, scale = 0.003921568859368563, offset = -128>>
// CHECK-NEXT:    %[[S:.*]] = glow.dequantize %sg
// CHECK-NEXT:    %[[X1:.*]] = glow.quantize %x
// CHECK-NEXT:    %[[T1:.*]] = glow.constant dense_resource<qtable_1> : tensor<256xi8>
// CHECK-NEXT:    %th = glow.int_lookup_table %[[X1]], %[[T1]] : {{.*}} -> tensor<2x3x!glow.quant<i8, scale = 0.007843137718737125, offset = 0>>
// CHECK-NEXT:    %[[T:.*]] = glow.dequantize %th
// CHECK-NEXT:    func.return %[[S]], %[[T]]
// CHECK:         qtable: "0x01000000c4c5c5c6
// CHECK-SAME:    qtable_1: "0x010000009f9fa0a0
// Kept float by name: sigmoid stays, tanh still becomes a table.
// KEEP-LABEL: func.func @sigmoid_tanh
// KEEP:         %sg = glow.sigmoid %x : tensor<2x3xf32>
// KEEP:         %th = glow.int_lookup_table
func.func @sigmoid_tanh(%x: tensor<2x3xf32> {glow.name = "x"}) -> (tensor<2x3xf32>, tensor<2x3xf32>) {
  %sg = glow.sigmoid %x : tensor<2x3xf32>
  %th = glow.tanh %x : tensor<2x3xf32>
  func.return %sg, %th : tensor<2x3xf32>, tensor<2x3xf32>
}

// -----

// Must not fire: an exp whose edges the profile does not have.
// CHECK-LABEL: func.func @no_profile
// CHECK-NOT:     glow.int_lookup_table
// CHECK:         %e = glow.exp %z : tensor<4xf32>
func.func @no_profile(%z: tensor<4xf32> {glow.name = "z"}) -> tensor<4xf32> {
  %e = glow.exp %z : tensor<4xf32>
  func.return %e : tensor<4xf32>
}

// -----

// A product by constant weights without a bias (BERT's linears, whose zero biases constant
// folding removed) quantizes as a fully_connected with a zero i32 bias; a product of two
// activations (%y: no constant) stays float.
// CHECK-LABEL: func.func @matmul_constant_weights
// CHECK:         %[[B:.*]] = glow.constant dense<0> : tensor<3xi32>
// CHECK:         %fc = glow.fully_connected %{{.*}}, %{{.*}}, %[[B]] : (tensor<1x4x!glow.quant<i8, {{.*}}>>, tensor<4x3x!glow.quant<i8, {{.*}}>>, tensor<3xi32>) -> tensor<1x3x!glow.quant<i8, scale = 0.0235294122248888, offset = -43>>
// CHECK:         %r = glow.mat_mul %fc_1, %y : (tensor<1x3xf32>, tensor<3x3xf32>) -> tensor<1x3xf32>
// CHECK-NOT:     glow.fully_connected
func.func @matmul_constant_weights(%x: tensor<1x4xf32> {glow.name = "x"}, %y: tensor<3x3xf32> {glow.name = "y"}) -> tensor<1x3xf32> {
  %w = glow.constant dense<[[0.5, -1.0, 0.25], [1.0, 0.0, -0.5], [-0.25, 0.75, 1.0], [0.0, 0.5, -1.0]]> : tensor<4x3xf32>
  %fc = glow.mat_mul %x, %w : (tensor<1x4xf32>, tensor<4x3xf32>) -> tensor<1x3xf32>
  %r = glow.mat_mul %fc, %y : (tensor<1x3xf32>, tensor<3x3xf32>) -> tensor<1x3xf32>
  func.return %r : tensor<1x3xf32>
}
