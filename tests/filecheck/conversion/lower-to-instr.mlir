// RUN: glow-opt %s --split-input-file --lower-to-instr | FileCheck %s

// A conv + relu + pool chain: weights in Glow's order (inputs, constants, outputs), named
// by glow.name or the resource handle; each intermediate result is an activation allocated
// right before its instruction; the last instruction writes the output weight itself; every
// activation is freed at the end, in reverse allocation order.
// CHECK-LABEL:  glow_ir.func @conv_relu_pool declare {
// CHECK-NEXT:     glow_ir.weight @data mutable input : memref<1x1x4x4xf32>
// CHECK-NEXT:     glow_ir.weight @conv_w constant : memref<2x1x1x1xf32> = dense_resource<conv_w> : tensor<2x1x1x1xf32>
// CHECK-NEXT:     glow_ir.weight @conv_b constant : memref<2xf32> = dense_resource<conv_b> : tensor<2xf32>
// CHECK-NEXT:     glow_ir.weight @prob mutable output : memref<1x2x2x2xf32>
// CHECK-NEXT:   } program(%data, %conv_w, %conv_b, %prob) {
// CHECK-NEXT:     %[[C:.*]] = glow_ir.alloc_activation : memref<1x2x4x4xf32>
// CHECK-NEXT:     glow_ir.convolution @out %[[C]], @in %data, @in %conv_w, @in %conv_b {kernels = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>} : memref<1x2x4x4xf32>, memref<1x1x4x4xf32>, memref<2x1x1x1xf32>, memref<2xf32>
// CHECK-NEXT:     %[[R:.*]] = glow_ir.alloc_activation : memref<1x2x4x4xf32>
// CHECK-NEXT:     glow_ir.relu @out %[[R]], @in %[[C]] : memref<1x2x4x4xf32>
// CHECK-NEXT:     glow_ir.max_pool @out %prob, @in %[[R]] {kernels = array<i64: 2, 2>, strides = array<i64: 2, 2>} : memref<1x2x2x2xf32>, memref<1x2x4x4xf32>
// CHECK-NEXT:     glow_ir.dealloc_activation %[[R]] : memref<1x2x4x4xf32>
// CHECK-NEXT:     glow_ir.dealloc_activation %[[C]] : memref<1x2x4x4xf32>
// CHECK-NEXT:   }
// The weights keep their bytes under the same handles.
// CHECK:        dialect_resources
// CHECK-DAG:      conv_w: "0x040000000000803f00000040"
// CHECK-DAG:      conv_b: "0x040000000000003f000080bf"
func.func @conv_relu_pool(%x: tensor<1x1x4x4xf32> {glow.name = "data"}) -> (tensor<1x2x2x2xf32> {glow.name = "prob"}) {
  %w = glow.constant dense_resource<conv_w> : tensor<2x1x1x1xf32>
  %b = glow.constant dense_resource<conv_b> : tensor<2xf32>
  %0 = glow.convolution %x, %w, %b {kernels = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>} : (tensor<1x1x4x4xf32>, tensor<2x1x1x1xf32>, tensor<2xf32>) -> tensor<1x2x4x4xf32>
  %1 = glow.relu %0 : tensor<1x2x4x4xf32>
  %2 = glow.max_pool %1 {kernels = array<i64: 2, 2>, strides = array<i64: 2, 2>} : tensor<1x2x4x4xf32> -> tensor<1x2x2x2xf32>
  func.return %2 : tensor<1x2x2x2xf32>
}
{-#
  dialect_resources: {
    builtin: {
      conv_w: "0x040000000000803F00000040",
      conv_b: "0x040000000000003F000080BF"
    }
  }
#-}

// -----

// An output also read later: the instruction writes the output weight, and its reader
// reads the output weight. Unnamed placeholders are input{i} / output{i}.
// CHECK-LABEL:  glow_ir.func @direct declare {
// CHECK-NEXT:     glow_ir.weight @input0 mutable input : memref<4xf32>
// CHECK-NEXT:     glow_ir.weight @output0 mutable output : memref<4xf32>
// CHECK-NEXT:     glow_ir.weight @output1 mutable output : memref<4xf32>
// CHECK-NEXT:   } program(%input0, %output0, %output1) {
// CHECK-NEXT:     glow_ir.element_neg @out %output0, @in %input0 : memref<4xf32>
// CHECK-NEXT:     glow_ir.element_abs @out %output1, @in %output0 : memref<4xf32>
// CHECK-NEXT:   }
func.func @direct(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %0 = glow.neg %x : tensor<4xf32>
  %1 = glow.abs %0 : tensor<4xf32>
  func.return %0, %1 : tensor<4xf32>, tensor<4xf32>
}

// -----

// An output that is an input, and one that is a constant: copies at the end.
// CHECK-LABEL:  glow_ir.func @passthrough declare {
// CHECK-NEXT:     glow_ir.weight @x mutable input : memref<2xf32>
// CHECK-NEXT:     glow_ir.weight @c constant : memref<2xf32> = dense_resource<c> : tensor<2xf32>
// CHECK-NEXT:     glow_ir.weight @y mutable output : memref<2xf32>
// CHECK-NEXT:     glow_ir.weight @output1 mutable output : memref<2xf32>
// CHECK-NEXT:   } program(%x, %c, %y, %output1) {
// CHECK-NEXT:     glow_ir.copy @out %y, @in %x : memref<2xf32>
// CHECK-NEXT:     glow_ir.copy @out %output1, @in %c : memref<2xf32>
// CHECK-NEXT:   }
func.func @passthrough(%x: tensor<2xf32> {glow.name = "x"}) -> (tensor<2xf32> {glow.name = "y"}, tensor<2xf32>) {
  %c = glow.constant dense_resource<c> : tensor<2xf32>
  func.return %x, %c : tensor<2xf32>, tensor<2xf32>
}
{-#
  dialect_resources: {
    builtin: {
      c: "0x040000000000803F00000040"
    }
  }
#-}

// -----

// A value returned twice: written directly into the first output, copied into the second.
// CHECK-LABEL:  glow_ir.func @twice declare {
// CHECK:        } program(%input0, %output0, %output1) {
// CHECK-NEXT:     glow_ir.relu @out %output0, @in %input0 : memref<3xf32>
// CHECK-NEXT:     glow_ir.copy @out %output1, @in %output0 : memref<3xf32>
// CHECK-NEXT:   }
func.func @twice(%x: tensor<3xf32>) -> (tensor<3xf32>, tensor<3xf32>) {
  %0 = glow.relu %x : tensor<3xf32>
  func.return %0, %0 : tensor<3xf32>, tensor<3xf32>
}

// -----

// A reshape is a view of its input's buffer (no instruction, no allocation); a returned
// view is copied into its output.
// CHECK-LABEL:  glow_ir.func @reshape declare {
// CHECK:        } program(%input0, %output0, %output1) {
// CHECK-NEXT:     %[[T:.*]] = glow_ir.alloc_activation : memref<2x3xf32>
// CHECK-NEXT:     glow_ir.tanh @out %[[T]], @in %input0 : memref<2x3xf32>
// CHECK-NEXT:     %[[V:.*]] = glow_ir.tensor_view %[[T]][0, 0] : memref<2x3xf32> to memref<6xf32>
// CHECK-NEXT:     glow_ir.sigmoid @out %output0, @in %[[V]] : memref<6xf32>
// CHECK-NEXT:     %[[W:.*]] = glow_ir.tensor_view %input0[0, 0] : memref<2x3xf32> to memref<3x2xf32>
// CHECK-NEXT:     glow_ir.copy @out %output1, @in %[[W]] : memref<3x2xf32>
// CHECK-NEXT:     glow_ir.dealloc_activation %[[T]] : memref<2x3xf32>
// CHECK-NEXT:   }
func.func @reshape(%x: tensor<2x3xf32>) -> (tensor<6xf32>, tensor<3x2xf32>) {
  %0 = glow.tanh %x : tensor<2x3xf32>
  %1 = glow.reshape %0 : tensor<2x3xf32> -> tensor<6xf32>
  %2 = glow.sigmoid %1 : tensor<6xf32>
  %3 = glow.reshape %x : tensor<2x3xf32> -> tensor<3x2xf32>
  func.return %2, %3 : tensor<6xf32>, tensor<3x2xf32>
}

// -----

// A slice is an extract_tensor at its start.
// CHECK-LABEL:  glow_ir.func @slice declare {
// CHECK:        } program(%input0, %output0) {
// CHECK-NEXT:     %[[S:.*]] = glow_ir.alloc_activation : memref<1x2xf32>
// CHECK-NEXT:     glow_ir.extract_tensor @out %[[S]], @in %input0 {offsets = array<i64: 1, 2>} : memref<1x2xf32>, memref<2x6xf32>
// CHECK-NEXT:     glow_ir.element_exp @out %output0, @in %[[S]] : memref<1x2xf32>
// CHECK-NEXT:     glow_ir.dealloc_activation %[[S]] : memref<1x2xf32>
// CHECK-NEXT:   }
func.func @slice(%x: tensor<2x6xf32>) -> tensor<1x2xf32> {
  %0 = glow.slice %x {start = array<i64: 1, 2>} : tensor<2x6xf32> -> tensor<1x2xf32>
  %1 = glow.exp %0 : tensor<1x2xf32>
  func.return %1 : tensor<1x2xf32>
}

// -----

// A concat is one insert_tensor per input, at the running offset along `dim`; here the
// result is an output, so the inserts go straight into the output weight.
// CHECK-LABEL:  glow_ir.func @concat declare {
// CHECK:        } program(%input0, %input1, %output0) {
// CHECK-NEXT:     glow_ir.insert_tensor @inout %output0, @in %input0 {offsets = array<i64: 0, 0>} : memref<2x6xf32>, memref<2x1xf32>
// CHECK-NEXT:     glow_ir.insert_tensor @inout %output0, @in %input1 {offsets = array<i64: 0, 1>} : memref<2x6xf32>, memref<2x3xf32>
// CHECK-NEXT:     glow_ir.insert_tensor @inout %output0, @in %input0 {offsets = array<i64: 0, 4>} : memref<2x6xf32>, memref<2x1xf32>
// CHECK-NEXT:     glow_ir.insert_tensor @inout %output0, @in %input0 {offsets = array<i64: 0, 5>} : memref<2x6xf32>, memref<2x1xf32>
// CHECK-NEXT:   }
func.func @concat(%a: tensor<2x1xf32>, %b: tensor<2x3xf32>) -> tensor<2x6xf32> {
  %0 = glow.concat %a, %b, %a, %a {dim = -1 : i64} : (tensor<2x1xf32>, tensor<2x3xf32>, tensor<2x1xf32>, tensor<2x1xf32>) -> tensor<2x6xf32>
  func.return %0 : tensor<2x6xf32>
}

// -----

// insert_tensor: the result starts as a copy of `big`, then `small` is inserted.
// CHECK-LABEL:  glow_ir.func @insert declare {
// CHECK:        } program(%input0, %input1, %output0) {
// CHECK-NEXT:     %[[I:.*]] = glow_ir.alloc_activation : memref<2x11x4xf32>
// CHECK-NEXT:     glow_ir.copy @out %[[I]], @in %input0 : memref<2x11x4xf32>
// CHECK-NEXT:     glow_ir.insert_tensor @inout %[[I]], @in %input1 {offsets = array<i64: 0, 1, 0>, count = 3 : i64, axis = 1 : i64} : memref<2x11x4xf32>, memref<2x3x4xf32>
// CHECK-NEXT:     glow_ir.relu @out %output0, @in %[[I]] : memref<2x11x4xf32>
// CHECK-NEXT:     glow_ir.dealloc_activation %[[I]] : memref<2x11x4xf32>
// CHECK-NEXT:   }
func.func @insert(%big: tensor<2x11x4xf32>, %small: tensor<2x3x4xf32>) -> tensor<2x11x4xf32> {
  %0 = glow.insert_tensor %big, %small {start = array<i64: 0, 1, 0>, count = 3 : i64, axis = 1 : i64} : (tensor<2x11x4xf32>, tensor<2x3x4xf32>) -> tensor<2x11x4xf32>
  %1 = glow.relu %0 : tensor<2x11x4xf32>
  func.return %1 : tensor<2x11x4xf32>
}

// -----

// A splat is an instruction with only a destination.
// CHECK-LABEL:  glow_ir.func @splat declare {
// CHECK:        } program(%input0, %output0) {
// CHECK-NEXT:     %[[S:.*]] = glow_ir.alloc_activation : memref<2x2xf32>
// CHECK-NEXT:     glow_ir.splat @out %[[S]] {value = 2.000000e+00 : f32} : memref<2x2xf32>
// CHECK-NEXT:     glow_ir.element_mul @out %output0, @in %input0, @in %[[S]] : memref<2x2xf32>
// CHECK-NEXT:     glow_ir.dealloc_activation %[[S]] : memref<2x2xf32>
// CHECK-NEXT:   }
func.func @splat(%x: tensor<2x2xf32>) -> tensor<2x2xf32> {
  %two = glow.splat {value = 2.0 : f32} : tensor<2x2xf32>
  %0 = glow.mul %x, %two : tensor<2x2xf32>
  func.return %0 : tensor<2x2xf32>
}

// -----

// An inline dense<...> constant moves to the resource table (a weight's value is always a
// dense_resource), under a handle made from its SSA name; a clash of names gets a suffix.
// CHECK-LABEL:  glow_ir.func @dense declare {
// CHECK-NEXT:     glow_ir.weight @bias mutable input : memref<3xf32>
// CHECK-NEXT:     glow_ir.weight @bias_1 constant : memref<3xf32> = dense_resource<bias> : tensor<3xf32>
// CHECK-NEXT:     glow_ir.weight @k constant : memref<3xi32> = dense_resource<k> : tensor<3xi32>
// CHECK-NEXT:     glow_ir.weight @output0 mutable output : memref<3xf32>
// CHECK-NEXT:     glow_ir.weight @output1 mutable output : memref<3xi32>
// CHECK-NEXT:   } program(%bias, %bias_1, %k, %output0, %output1) {
// CHECK-NEXT:     glow_ir.element_add @out %output0, @in %bias, @in %bias_1 : memref<3xf32>
// CHECK-NEXT:     glow_ir.copy @out %output1, @in %k : memref<3xi32>
// CHECK-NEXT:   }
// CHECK:        dialect_resources
// CHECK-DAG:      bias: "0x040000000000803f0000004000004040"
// CHECK-DAG:      k: "0x04000000070000000700000007000000"
func.func @dense(%x: tensor<3xf32> {glow.name = "bias"}) -> (tensor<3xf32>, tensor<3xi32>) {
  %bias = glow.constant dense<[1.0, 2.0, 3.0]> : tensor<3xf32>
  %k = glow.constant dense<7> : tensor<3xi32>
  %0 = glow.add %x, %bias : tensor<3xf32>
  func.return %0, %k : tensor<3xf32>, tensor<3xi32>
}

// -----

// top_k: two destinations, each written straight into its output weight.
// CHECK-LABEL:  glow_ir.func @top_k declare {
// CHECK:        } program(%input0, %output0, %output1) {
// CHECK-NEXT:     glow_ir.top_k @out %output0, @out %output1, @in %input0 {k = 2 : i64} : memref<3x2xf32>, memref<3x2xi64>, memref<3x5xf32>
// CHECK-NEXT:   }
func.func @top_k(%x: tensor<3x5xf32>) -> (tensor<3x2xf32>, tensor<3x2xi64>) {
  %v, %i = glow.top_k %x {k = 2 : i64} : (tensor<3x5xf32>) -> (tensor<3x2xf32>, tensor<3x2xi64>)
  func.return %v, %i : tensor<3x2xf32>, tensor<3x2xi64>
}

// -----

// top_k with only its indices returned: the values are an activation nobody reads.
// CHECK-LABEL:  glow_ir.func @top_k_indices declare {
// CHECK:        } program(%input0, %output0) {
// CHECK-NEXT:     %[[V:.*]] = glow_ir.alloc_activation : memref<3x2xf32>
// CHECK-NEXT:     glow_ir.top_k @out %[[V]], @out %output0, @in %input0 {k = 2 : i64} : memref<3x2xf32>, memref<3x2xi64>, memref<3x5xf32>
// CHECK-NEXT:     glow_ir.dealloc_activation %[[V]] : memref<3x2xf32>
// CHECK-NEXT:   }
func.func @top_k_indices(%x: tensor<3x5xf32>) -> tensor<3x2xi64> {
  %v, %i = glow.top_k %x {k = 2 : i64} : (tensor<3x5xf32>) -> (tensor<3x2xf32>, tensor<3x2xi64>)
  func.return %i : tensor<3x2xi64>
}

// -----

// Functions without ops, in module order; every func.func is replaced.
// CHECK:        builtin.module {
// CHECK-NEXT:     glow_ir.func @nothing declare {
// CHECK-NEXT:     } program() {
// CHECK-NEXT:     }
// CHECK-NEXT:     glow_ir.func @identity declare {
// CHECK-NEXT:       glow_ir.weight @input0 mutable input : memref<f32>
// CHECK-NEXT:       glow_ir.weight @output0 mutable output : memref<f32>
// CHECK-NEXT:     } program(%input0, %output0) {
// CHECK-NEXT:       glow_ir.copy @out %output0, @in %input0 : memref<f32>
// CHECK-NEXT:     }
// CHECK-NEXT:   }
// CHECK-NOT:    func.func
func.func @nothing() {
  func.return
}
func.func @identity(%x: tensor<f32>) -> tensor<f32> {
  func.return %x : tensor<f32>
}

// -----

// Quantized element types live in memrefs as they are.
// CHECK-LABEL:  glow_ir.func @quantized declare {
// CHECK:        } program(%input0, %output0) {
// CHECK-NEXT:     %[[Q:.*]] = glow_ir.alloc_activation : memref<4x!glow.quant<i8, scale = 0.5, offset = 0>>
// CHECK-NEXT:     glow_ir.quantize @out %[[Q]], @in %input0 : memref<4x!glow.quant<i8, scale = 0.5, offset = 0>>, memref<4xf32>
// CHECK-NEXT:     glow_ir.dequantize @out %output0, @in %[[Q]] : memref<4xf32>, memref<4x!glow.quant<i8, scale = 0.5, offset = 0>>
// CHECK-NEXT:     glow_ir.dealloc_activation %[[Q]]
// CHECK-NEXT:   }
func.func @quantized(%x: tensor<4xf32>) -> tensor<4xf32> {
  %q = glow.quantize %x : tensor<4xf32> -> tensor<4x!glow.quant<i8, scale = 0.5, offset = 0>>
  %d = glow.dequantize %q : tensor<4x!glow.quant<i8, scale = 0.5, offset = 0>> -> tensor<4xf32>
  func.return %d : tensor<4xf32>
}

// -----

// glow.if: one glow_ir.if whose operands are the results' buffers (the first returned
// result is its output weight), the condition, then what the branches read from outside
// (the branch's constant is a weight of the function); each branch is a program on those
// operands: an op that computes a yielded value writes the result buffer, a value from
// outside or yielded twice is copied, what a branch allocates it frees.
// CHECK-LABEL:  glow_ir.func @branches declare {
// CHECK:          glow_ir.weight @w constant : memref<4xf32>
// CHECK:        } program(%input0, %input1, %w, %output0, %output1) {
// CHECK-NEXT:     %r = glow_ir.alloc_activation : memref<4xf32>
// CHECK-NEXT:     glow_ir.if @out %output0, @out %r, @in %input0, @in %input1, @in %w : memref<4xf32>, memref<4xf32>, memref<i1>, memref<4xf32>, memref<4xf32> {
// CHECK-NEXT:     ^bb0(%[[Y0:.*]]: memref<4xf32>, %[[Y1:.*]]: memref<4xf32>, %{{.*}}: memref<i1>, %[[X:.*]]: memref<4xf32>, %[[W:.*]]: memref<4xf32>):
// CHECK-NEXT:       %a = glow_ir.alloc_activation : memref<4xf32>
// CHECK-NEXT:       glow_ir.relu @out %a, @in %[[X]]
// CHECK-NEXT:       glow_ir.element_mul @out %[[Y0]], @in %a, @in %[[W]]
// CHECK-NEXT:       glow_ir.copy @out %[[Y1]], @in %[[X]]
// CHECK-NEXT:       glow_ir.dealloc_activation %a
// CHECK-NEXT:     } else {
// CHECK-NEXT:     ^bb0(%[[E0:.*]]: memref<4xf32>, %[[E1:.*]]: memref<4xf32>, %{{.*}}: memref<i1>, %[[EX:.*]]: memref<4xf32>, %{{.*}}: memref<4xf32>):
// CHECK-NEXT:       glow_ir.tanh @out %[[E0]], @in %[[EX]]
// CHECK-NEXT:       glow_ir.copy @out %[[E1]], @in %[[E0]]
// CHECK-NEXT:     }
// CHECK-NEXT:     glow_ir.element_add @out %output1, @in %r, @in %input1
// CHECK-NEXT:     glow_ir.dealloc_activation %r
func.func @branches(%c: tensor<i1>, %x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %r:2 = glow.if %c : tensor<i1> -> (tensor<4xf32>, tensor<4xf32>) {
    %w = glow.constant dense<2.0> : tensor<4xf32>
    %a = glow.relu %x : tensor<4xf32>
    %b = glow.mul %a, %w : tensor<4xf32>
    glow.yield %b, %x : tensor<4xf32>, tensor<4xf32>
  } else {
    %e = glow.tanh %x : tensor<4xf32>
    glow.yield %e, %e : tensor<4xf32>, tensor<4xf32>
  }
  %s = glow.add %r#1, %x : tensor<4xf32>
  func.return %r#0, %s : tensor<4xf32>, tensor<4xf32>
}

// -----

// glow.loop: the results' buffers (here the output weights) get the initial values by
// copies, two activations hold the iteration number and the condition; the body reads
// the carried buffers, computes into its own activations, writes the condition, then
// copies the next values in (the one that is another carried buffer through a copy of
// its own first, since the copies could overwrite it).
// CHECK-LABEL:  glow_ir.func @swap declare {
// CHECK:        } program(%input0, %input1, %input2, %input3, %output0, %output1) {
// CHECK-NEXT:     glow_ir.copy @out %output0, @in %input2
// CHECK-NEXT:     glow_ir.copy @out %output1, @in %input3
// CHECK-NEXT:     %[[I:.*]] = glow_ir.alloc_activation : memref<i64>
// CHECK-NEXT:     %[[K:.*]] = glow_ir.alloc_activation : memref<i1>
// CHECK-NEXT:     glow_ir.loop @inout %output0, @inout %output1, @out %[[I]], @out %[[K]], @in %input0, @in %input1 : memref<4xf32>, memref<4xf32>, memref<i64>, memref<i1>, memref<i64>, memref<i1> {
// CHECK-NEXT:     ^bb0(%[[P:.*]]: memref<4xf32>, %[[Q:.*]]: memref<4xf32>, %{{.*}}: memref<i64>, %[[C:.*]]: memref<i1>, %{{.*}}: memref<i64>, %{{.*}}: memref<i1>):
// CHECK-NEXT:       %s = glow_ir.alloc_activation : memref<4xf32>
// CHECK-NEXT:       glow_ir.element_add @out %s, @in %[[P]], @in %[[Q]]
// CHECK-NEXT:       glow_ir.splat @out %[[C]] {value = 1.000000e+00 : f32} : memref<i1>
// CHECK-NEXT:       %[[T:.*]] = glow_ir.alloc_activation : memref<4xf32>
// CHECK-NEXT:       glow_ir.copy @out %[[T]], @in %[[Q]]
// CHECK-NEXT:       glow_ir.copy @out %[[P]], @in %[[T]]
// CHECK-NEXT:       glow_ir.copy @out %[[Q]], @in %s
// CHECK-NEXT:       glow_ir.dealloc_activation %[[T]]
// CHECK-NEXT:       glow_ir.dealloc_activation %s
// CHECK-NEXT:     }
// CHECK-NEXT:     glow_ir.dealloc_activation %[[K]]
// CHECK-NEXT:     glow_ir.dealloc_activation %[[I]]
func.func @swap(%m: tensor<i64>, %c: tensor<i1>, %a: tensor<4xf32>, %b: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %r:2 = glow.loop %m, %c, %a, %b : tensor<i64>, tensor<i1>, tensor<4xf32>, tensor<4xf32> -> (tensor<4xf32>, tensor<4xf32>) {
  ^bb0(%i: tensor<i64>, %p: tensor<4xf32>, %q: tensor<4xf32>):
    %s = glow.add %p, %q : tensor<4xf32>
    %t = glow.splat {value = 1.0 : f32} : tensor<i1>
    glow.yield %t, %q, %s : tensor<i1>, tensor<4xf32>, tensor<4xf32>
  }
  func.return %r#0, %r#1 : tensor<4xf32>, tensor<4xf32>
}
