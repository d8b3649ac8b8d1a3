// convert-glow-ir-to-accel on a quantized convolution (u8 input, i8 filter, i32 bias, i8
// output): the tiles keep the 8-bit element types (1 byte each: the input box of 4x8x8
// is 256 bytes, where f32 would need 1 KiB), the bias tile is i32, and every step takes
// all input channels (the unit accumulates in i32 and requantizes at write-back, so no
// step accumulates into an 8-bit tile): no `accumulate` conv. The lower bound counts
// bytes: input 256 + filter 72 + bias 8 + output 128.
// RUN: glow-opt %s --split-input-file --convert-glow-ir-to-accel | FileCheck %s

// CHECK-LABEL:  glow_ir.func @qconv
// CHECK:          %[[I:.*]] = glow_accel.scratchpad_alloc : memref<1x4x8x8x!glow.quant<ui8, scale = 0.0078125, offset = 128>, 1 : i64>
// CHECK-NEXT:     glow_accel.dma_start %x[0, 0, 0, 0] -> %[[I]][0, 0, 0, 0] sizes [1, 4, 8, 8]
// CHECK:          glow_accel.dma_start %f[0, 0, 0, 0] -> %{{.*}}[0, 0, 0, 0] sizes [1, 4, 3, 3]
// CHECK:          %[[B:.*]] = glow_accel.scratchpad_alloc : memref<1xi32, 1 : i64>
// CHECK:          %[[O:.*]] = glow_accel.scratchpad_alloc : memref<1x1x8x8x!glow.quant<i8, scale = 0.05, offset = 3>, 1 : i64>
// CHECK-NEXT:     glow_accel.conv @out %[[O]], @in %[[I]], @in %{{.*}}, @in %[[B]] {{.*}} : memref<1x1x8x8x!glow.quant<i8, scale = 0.05, offset = 3>, 1 : i64>, memref<1x4x8x8x!glow.quant<ui8, scale = 0.0078125, offset = 128>, 1 : i64>, memref<1x4x3x3x!glow.quant<i8, scale = 0.02, offset = 0>, 1 : i64>, memref<1xi32, 1 : i64>
// CHECK-NEXT:     glow_accel.dma_start %[[O]][0, 0, 0, 0] -> %y[0, 0, 0, 0] sizes [1, 1, 8, 8]
// CHECK:          glow_accel.conv @out
// CHECK-NEXT:     glow_accel.dma_start %{{.*}}[0, 0, 0, 0] -> %y[0, 1, 0, 0] sizes [1, 1, 8, 8]
// CHECK:          glow_accel.dma_lower_bound = 464 : i64
glow_ir.func @qconv declare {
  glow_ir.weight @x mutable input : memref<1x4x8x8x!glow.quant<ui8, scale = 0.0078125, offset = 128>>
  glow_ir.weight @f constant input : memref<2x4x3x3x!glow.quant<i8, scale = 0.02, offset = 0>>
  glow_ir.weight @b constant input : memref<2xi32>
  glow_ir.weight @y mutable output : memref<1x2x8x8x!glow.quant<i8, scale = 0.05, offset = 3>>
} program(%x, %f, %b, %y) {
  glow_ir.convolution @out %y, @in %x, @in %f, @in %b {kernels = array<i64: 3, 3>, strides = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, dilation = array<i64: 1, 1>, group = 1 : i64} : memref<1x2x8x8x!glow.quant<i8, scale = 0.05, offset = 3>>, memref<1x4x8x8x!glow.quant<ui8, scale = 0.0078125, offset = 128>>, memref<2x4x3x3x!glow.quant<i8, scale = 0.02, offset = 0>>, memref<2xi32>
} attributes {glow_accel.target = #glow_accel.target<scratchpad_bytes = 1024, dma_bytes_per_cycle = 32, dma_latency = 64, macs_per_cycle = 256, vector_width = 16, alignment = 64>}

// -----

// 512 bytes, 16-byte alignment: a float conv would chunk the input channels and
// accumulate; the int8 one splits the output columns instead, every step with all 4 input
// channels and the whole filter, none accumulating.
// CHECK-LABEL:  glow_ir.func @qconv_columns
// CHECK-NOT:      accumulate
// CHECK:          glow_accel.conv @out %{{.*}} : memref<1x2x8x2x!glow.quant<i8, scale = 0.05, offset = 3>, 1 : i64>, memref<1x4x8x3x!glow.quant<ui8, scale = 0.0078125, offset = 128>, 1 : i64>, memref<2x4x3x3x!glow.quant<i8, scale = 0.02, offset = 0>, 1 : i64>, memref<2xi32, 1 : i64>
// CHECK-NOT:      accumulate
// CHECK:          -> %y[0, 0, 0, 6] sizes [1, 2, 8, 2]
// CHECK-NOT:      accumulate
// CHECK:          glow_accel.dma_lower_bound = 464 : i64
glow_ir.func @qconv_columns declare {
  glow_ir.weight @x mutable input : memref<1x4x8x8x!glow.quant<ui8, scale = 0.0078125, offset = 128>>
  glow_ir.weight @f constant input : memref<2x4x3x3x!glow.quant<i8, scale = 0.02, offset = 0>>
  glow_ir.weight @b constant input : memref<2xi32>
  glow_ir.weight @y mutable output : memref<1x2x8x8x!glow.quant<i8, scale = 0.05, offset = 3>>
} program(%x, %f, %b, %y) {
  glow_ir.convolution @out %y, @in %x, @in %f, @in %b {kernels = array<i64: 3, 3>, strides = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, dilation = array<i64: 1, 1>, group = 1 : i64} : memref<1x2x8x8x!glow.quant<i8, scale = 0.05, offset = 3>>, memref<1x4x8x8x!glow.quant<ui8, scale = 0.0078125, offset = 128>>, memref<2x4x3x3x!glow.quant<i8, scale = 0.02, offset = 0>>, memref<2xi32>
} attributes {glow_accel.target = #glow_accel.target<scratchpad_bytes = 512, dma_bytes_per_cycle = 32, dma_latency = 64, macs_per_cycle = 256, vector_width = 16, alignment = 16>}
