// RUN: glow-opt %s --split-input-file -p 'quantize-graph{profile="%S/../inputs/quantize-graph-profile.json" channelwise-conv=true rowwise-fc=true}' | FileCheck %s
// RUN: glow-opt %s --split-input-file -p 'quantize-graph{profile="%S/../inputs/quantize-graph-profile.json"}' | FileCheck %s --check-prefix=TENSOR

// The profile (tests/filecheck/inputs/quantize-graph-profile.json) gives x [-1, 1] and
// fc [-2, 4]. rowwise-fc: the weights transposed to [outputs, inputs] = [3, 4], each row
// quantized by the schema (asymmetric) from its own range, held as i8 with an f32 scale
// and an i32 offset per row; the bias i32 at x's scale times its row's scale.
// Row 0 is [0.5, 1.0, -0.25, 0.0]: range [-0.25, 1.0], scale 1.25/255, offset
// -128 + round(0.25 / (1.25/255)) = -77, so 0.5 is 102 - 77 = 25 and 1.0 is 127; its
// bias 0.5 / (2/255 * 1.25/255) = 13005.
// CHECK-LABEL: func.func @dense
// CHECK-NEXT:    %[[X:.*]] = glow.quantize %x : tensor<1x4xf32> -> tensor<1x4x!glow.quant<i8, scale = 0.007843137718737125, offset = 0>>
// CHECK-NEXT:    %[[W:.*]] = glow.constant dense<{{\[\[}}25, 127, -128, -77], [-128, 18, 127, 91], [32, -64, 127, -127]]> : tensor<3x4xi8>
// CHECK-NEXT:    %[[B:.*]] = glow.constant dense<[13005, -4645, 16256]> : tensor<3xi32>
// CHECK-NEXT:    %[[S:.*]] = glow.constant dense<[0.00490196096, 0.00686274515, 0.00784313772]> : tensor<3xf32>
// CHECK-NEXT:    %[[O:.*]] = glow.constant dense<[-77, 18, 0]> : tensor<3xi32>
// CHECK-NEXT:    %fc = glow.rowwise_quantized_fully_connected %[[X]], %[[W]], %[[B]], %[[S]], %[[O]] : (tensor<1x4x!glow.quant<i8, scale = 0.007843137718737125, offset = 0>>, tensor<3x4xi8>, tensor<3xi32>, tensor<3xf32>, tensor<3xi32>) -> tensor<1x3x!glow.quant<i8, scale = 0.0235294122248888, offset = -43>>
// CHECK-NEXT:    %[[R:.*]] = glow.dequantize %fc
// CHECK-NEXT:    func.return %[[R]]
// TENSOR-LABEL: func.func @dense
// TENSOR:         %fc = glow.fully_connected
func.func @dense(%x: tensor<1x4xf32> {glow.name = "x"}) -> tensor<1x3xf32> {
  %w = glow.constant dense<[[0.5, -1.0, 0.25], [1.0, 0.0, -0.5], [-0.25, 0.75, 1.0], [0.0, 0.5, -1.0]]> : tensor<4x3xf32>
  %b = glow.constant dense<[0.5, -0.25, 1.0]> : tensor<3xf32>
  %fc = glow.fully_connected %x, %w, %b : (tensor<1x4xf32>, tensor<4x3xf32>, tensor<3xf32>) -> tensor<1x3xf32>
  func.return %fc : tensor<1x3xf32>
}

// -----

// channelwise-conv: filters symmetric per output channel (offsets 0), whatever the schema:
// filter 0 reaches 2.0 (2/127), filter 1 0.5 (0.5/128: its extreme is negative).
// CHECK-LABEL: func.func @conv
// CHECK-NEXT:    %[[X:.*]] = glow.quantize %x
// CHECK-NEXT:    %[[W:.*]] = glow.constant dense<{{\[\[\[\[}}127]]], {{\[\[\[}}-128]]]]> : tensor<2x1x1x1xi8>
// CHECK-NEXT:    %[[B:.*]] = glow.constant dense<0> : tensor<2xi32>
// CHECK-NEXT:    %[[S:.*]] = glow.constant dense<[0.0157480314, 3.906250e-03]> : tensor<2xf32>
// CHECK-NEXT:    %[[O:.*]] = glow.constant dense<0> : tensor<2xi32>
// CHECK-NEXT:    %t = glow.channelwise_quantized_convolution %[[X]], %[[W]], %[[B]], %[[S]], %[[O]] {kernels = array<i64: 1, 1>} : (tensor<1x1x2x2x!glow.quant<i8, scale = 0.007843137718737125, offset = 0>>, tensor<2x1x1x1xi8>, tensor<2xi32>, tensor<2xf32>, tensor<2xi32>) -> tensor<1x2x2x2x!glow.quant<i8, scale = 0.007843137718737125, offset = 0>>
// TENSOR-LABEL: func.func @conv
// TENSOR:         %t = glow.convolution
func.func @conv(%x: tensor<1x1x2x2xf32> {glow.name = "x"}) -> tensor<1x2x2x2xf32> {
  %w = glow.constant dense<[[[[2.0]]], [[[-0.5]]]]> : tensor<2x1x1x1xf32>
  %b = glow.constant dense<0.0> : tensor<2xf32>
  %t = glow.convolution %x, %w, %b {kernels = array<i64: 1, 1>} : (tensor<1x1x2x2xf32>, tensor<2x1x1x1xf32>, tensor<2xf32>) -> tensor<1x2x2x2xf32>
  func.return %t : tensor<1x2x2x2xf32>
}
