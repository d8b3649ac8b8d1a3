// RUN: glow-opt %s --split-input-file -p 'quantize-graph{profile="%S/../inputs/quantize-graph-profile.json"}' | FileCheck %s
// RUN: glow-opt %s --split-input-file -p 'quantize-graph{profile="%S/../inputs/quantize-graph-profile.json" keep-float=relu,add schema=symmetric}' | FileCheck %s --check-prefix=KEEP
// RUN: not glow-opt %s --split-input-file -p 'quantize-graph{profile="%S/../inputs/quantize-graph-profile.json" keep-float=nope}' 2>&1 | FileCheck %s --check-prefix=BADNAME
// RUN: not glow-opt %s -p 'quantize-graph{profile="%S/../inputs/quantize-graph-profile.json" schema=pow3}' 2>&1 | FileCheck %s --check-prefix=BADSCHEMA
// RUN: not glow-opt %s -p 'quantize-graph' 2>&1 | FileCheck %s --check-prefix=NOPROFILE

// BADNAME: glow-opt: error: quantize-graph: keep_float names 'nope', which is neither an op kind (e.g. 'convolution', 'glow.add') nor a node of the graph, named by its output (its nodes include fc, r, x)
// BADSCHEMA: glow-opt: error: quantize-graph: unknown quantization schema 'pow3'; the quantization schemas are 'asymmetric', 'symmetric', 'symmetric_uint8', 'symmetric_pow2'
// NOPROFILE: glow-opt: error: invalid pass pipeline 'quantize-graph': quantize-graph: give the profile file (profile="P.json")

// The profile (tests/filecheck/inputs/quantize-graph-profile.json) gives x [-1, 1],
// fc [-2, 4] and r [0, 4]. Asymmetric: x at 2/255 with offset 0 (a range symmetric about
// 0); the weights at their own range [-1, 1]; the bias i32 at x's scale times the
// weights' (0.5 / (2/255)^2 = 8128.5, rounded half to even); fc takes the range of the
// relu it feeds, [0, 4] at 4/255 with offset -128, and the relu keeps fc's type. One
// dequantize at the end.
// CHECK-LABEL: func.func @dense_relu
// CHECK-NEXT:    %[[W:.*]] = glow.constant dense_resource<qweights> : tensor<4x3x!glow.quant<i8, scale = 0.007843137718737125, offset = 0>>
// CHECK-NEXT:    %[[B:.*]] = glow.constant dense<[8128, -4064, 16256]> : tensor<3xi32>
// CHECK-NEXT:    %[[X:.*]] = glow.quantize %x : tensor<1x4xf32> -> tensor<1x4x!glow.quant<i8, scale = 0.007843137718737125, offset = 0>>
// CHECK-NEXT:    %fc = glow.fully_connected %[[X]], %[[W]], %[[B]] : (tensor<1x4x!glow.quant<i8, scale = 0.007843137718737125, offset = 0>>, tensor<4x3x!glow.quant<i8, scale = 0.007843137718737125, offset = 0>>, tensor<3xi32>) -> tensor<1x3x!glow.quant<i8, scale = 0.01568627543747425, offset = -128>>
// CHECK-NEXT:    %r = glow.relu %fc : tensor<1x3x!glow.quant<i8, scale = 0.01568627543747425, offset = -128>>
// CHECK-NEXT:    %[[R:.*]] = glow.dequantize %r : tensor<1x3x!glow.quant<i8, scale = 0.01568627543747425, offset = -128>> -> tensor<1x3xf32>
// CHECK-NEXT:    func.return %[[R]]
// With relu kept float, fc takes its own range [-2, 4] (symmetric: 4/127, offset 0) and
// is dequantized for the relu.
// KEEP-LABEL: func.func @dense_relu
// KEEP:         %fc = glow.fully_connected {{.*}} -> tensor<1x3x!glow.quant<i8, scale = 0.031496062874794006, offset = 0>>
// KEEP-NEXT:    %[[F:.*]] = glow.dequantize %fc
// KEEP-NEXT:    %r = glow.relu %[[F]] : tensor<1x3xf32>
func.func @dense_relu(%x: tensor<1x4xf32> {glow.name = "x"}) -> tensor<1x3xf32> {
  %w = glow.constant dense<[[0.5, -1.0, 0.25], [1.0, 0.0, -0.5], [-0.25, 0.75, 1.0], [0.0, 0.5, -1.0]]> : tensor<4x3xf32>
  %b = glow.constant dense<[0.5, -0.25, 1.0]> : tensor<3xf32>
  %fc = glow.fully_connected %x, %w, %b : (tensor<1x4xf32>, tensor<4x3xf32>, tensor<3xf32>) -> tensor<1x3xf32>
  %r = glow.relu %fc : tensor<1x3xf32>
  func.return %r : tensor<1x3xf32>
}

// -----

// add and concat want one type for their operands and result: over the union of their
// ranges (add: x [-1, 1], y [-3, 1], s [-4, 2]: 6/255, offset 42; concat: s, y and
// cat [-6, 3]: 9/255, offset 42). The add's stored result is rescaled for the concat, not
// dequantized and quantized again.
// CHECK-LABEL: func.func @add_concat
// CHECK-NEXT:    %[[X:.*]] = glow.quantize %x : tensor<2x2xf32> -> tensor<2x2x!glow.quant<i8, scale = 0.0235294122248888, offset = 42>>
// CHECK-NEXT:    %[[Y:.*]] = glow.quantize %y : tensor<2x2xf32> -> tensor<2x2x!glow.quant<i8, scale = 0.0235294122248888, offset = 42>>
// CHECK-NEXT:    %s = glow.add %[[X]], %[[Y]] : tensor<2x2x!glow.quant<i8, scale = 0.0235294122248888, offset = 42>>
// CHECK-NEXT:    %[[S:.*]] = glow.rescale_quantized %s : tensor<2x2x!glow.quant<i8, scale = 0.0235294122248888, offset = 42>> -> tensor<2x2x!glow.quant<i8, scale = 0.03529411926865578, offset = 42>>
// CHECK-NEXT:    %[[Y2:.*]] = glow.quantize %y : tensor<2x2xf32> -> tensor<2x2x!glow.quant<i8, scale = 0.03529411926865578, offset = 42>>
// CHECK-NEXT:    %cat = glow.concat %[[S]], %[[Y2]] {dim = 1 : i64}
// CHECK-NEXT:    %[[C:.*]] = glow.dequantize %cat
// CHECK-NEXT:    func.return %[[C]]
// KEEP-LABEL: func.func @add_concat
// KEEP-NEXT:    %s = glow.add %x, %y : tensor<2x2xf32>
// KEEP-NEXT:    glow.quantize %s
func.func @add_concat(%x: tensor<2x2xf32> {glow.name = "x"}, %y: tensor<2x2xf32> {glow.name = "y"}) -> tensor<2x4xf32> {
  %s = glow.add %x, %y : tensor<2x2xf32>
  %cat = glow.concat %s, %y {dim = 1 : i64} : (tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<2x4xf32>
  func.return %cat : tensor<2x4xf32>
}

// -----

// Must not fire: weights that are not constants (fc), an op that is not Quantizable
// (sigmoid), and a relu whose input edge has no profile entry (q).
// CHECK-LABEL: func.func @not_quantized
// CHECK-NEXT:    %fc = glow.fully_connected %x, %w, %b : (tensor<1x4xf32>, tensor<4x3xf32>, tensor<3xf32>) -> tensor<1x3xf32>
// CHECK-NEXT:    %q = glow.sigmoid %x : tensor<1x4xf32>
// CHECK-NEXT:    %u = glow.relu %q : tensor<1x4xf32>
// CHECK-NEXT:    func.return %fc, %u
func.func @not_quantized(%x: tensor<1x4xf32> {glow.name = "x"}, %w: tensor<4x3xf32>, %b: tensor<3xf32>) -> (tensor<1x3xf32>, tensor<1x4xf32>) {
  %fc = glow.fully_connected %x, %w, %b : (tensor<1x4xf32>, tensor<4x3xf32>, tensor<3xf32>) -> tensor<1x3xf32>
  %q = glow.sigmoid %x : tensor<1x4xf32>
  %u = glow.relu %q : tensor<1x4xf32>
  func.return %fc, %u : tensor<1x3xf32>, tensor<1x4xf32>
}
