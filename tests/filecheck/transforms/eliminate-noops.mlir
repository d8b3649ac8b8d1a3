// RUN: glow-opt %s --split-input-file --eliminate-noops | FileCheck %s

// CHECK-LABEL: func.func @identities
// CHECK-NEXT:    func.return %x
func.func @identities(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %0 = glow.reshape %x : tensor<2x3xf32> -> tensor<2x3xf32>
  %1 = glow.transpose %0 {shuffle = array<i64: 0, 1>} : tensor<2x3xf32> -> tensor<2x3xf32>
  %2 = glow.slice %1 {start = array<i64: 0, 0>} : tensor<2x3xf32> -> tensor<2x3xf32>
  %3 = glow.pad %2 {pads = array<i64: 0, 0, 0, 0>} : tensor<2x3xf32> -> tensor<2x3xf32>
  %4 = glow.broadcast %3 {axis = 0 : i64} : tensor<2x3xf32> -> tensor<2x3xf32>
  %5 = glow.tile %4 {count = 1 : i64, axis = 1 : i64} : tensor<2x3xf32> -> tensor<2x3xf32>
  %6 = glow.concat %5 {dim = 0 : i64} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %7 = glow.convert_to %6 : tensor<2x3xf32> -> tensor<2x3xf32>
  func.return %7 : tensor<2x3xf32>
}

// -----

// The unit constants die with their users (the rewriter erases dead pure ops).
// CHECK-LABEL: func.func @arith_units
// CHECK-NEXT:    func.return %x
func.func @arith_units(%x: tensor<4xf32>) -> tensor<4xf32> {
  %zero = glow.splat {value = 0.0 : f32} : tensor<4xf32>
  %one = glow.constant dense<1.0> : tensor<4xf32>
  %0 = glow.add %zero, %x : tensor<4xf32>
  %1 = glow.sub %0, %zero : tensor<4xf32>
  %2 = glow.mul %1, %one : tensor<4xf32>
  %3 = glow.div %2, %one : tensor<4xf32>
  %4 = glow.max %3, %3 : tensor<4xf32>
  func.return %4 : tensor<4xf32>
}

// -----

// CHECK-LABEL: func.func @activations
// CHECK-NEXT:    %[[R:.*]] = glow.relu %x
// CHECK-NEXT:    %[[C:.*]] = glow.clip %x {min = 0.000000e+00 : f32, max = 6.000000e+00 : f32}
// CHECK-NEXT:    func.return %[[R]], %[[C]], %x
func.func @activations(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) {
  %r = glow.relu %x : tensor<4xf32>
  %rr = glow.relu %r : tensor<4xf32>
  %c = glow.clip %x {min = 0.0 : f32, max = 6.0 : f32} : tensor<4xf32>
  %rc = glow.relu %c : tensor<4xf32>
  %wide = glow.clip %x {min = 0xFF800000 : f32, max = 0x7F800000 : f32} : tensor<4xf32>
  %n = glow.neg %wide : tensor<4xf32>
  %nn = glow.neg %n : tensor<4xf32>
  func.return %rr, %rc, %nn : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
}

// -----

// Must not fire: these change values or types.
// CHECK-LABEL: func.func @not_noops
// CHECK:         glow.transpose
// CHECK:         glow.add
// CHECK:         glow.mul
// CHECK:         glow.sub
// CHECK:         glow.clip
// CHECK:         glow.relu
// CHECK:         glow.reshape
func.func @not_noops(%x: tensor<2x2xf32>, %y: tensor<2x2xf32>) -> (tensor<2x2xf32>, tensor<2x2xf32>, tensor<2x2xf32>, tensor<2x2xf32>, tensor<2x2xf32>, tensor<4xf32>) {
  %t = glow.transpose %x {shuffle = array<i64: 1, 0>} : tensor<2x2xf32> -> tensor<2x2xf32>
  %half = glow.splat {value = 0.5 : f32} : tensor<2x2xf32>
  %a = glow.add %t, %half : tensor<2x2xf32>
  %m = glow.mul %a, %y : tensor<2x2xf32>
  %zero = glow.splat {value = 0.0 : f32} : tensor<2x2xf32>
  %s = glow.sub %zero, %m : tensor<2x2xf32>
  %c = glow.clip %s {min = -1.0 : f32, max = 6.0 : f32} : tensor<2x2xf32>
  %r = glow.relu %c : tensor<2x2xf32>
  %f = glow.reshape %r : tensor<2x2xf32> -> tensor<4xf32>
  func.return %t, %a, %m, %c, %r, %f : tensor<2x2xf32>, tensor<2x2xf32>, tensor<2x2xf32>, tensor<2x2xf32>, tensor<2x2xf32>, tensor<4xf32>
}

// -----

// A clip wider than its element type's range is a no-op for bfloat16 and int8 too (their
// ranges come from ml_dtypes and numpy); one inside the range stays.
// CHECK-LABEL: func.func @clip_ranges_of_other_types
// CHECK-NEXT:    %[[K:.*]] = glow.clip %b {min = -1.000000e+00 : f32, max = 1.000000e+00 : f32}
// CHECK-NEXT:    func.return %[[K]], %i
func.func @clip_ranges_of_other_types(%b: tensor<4xbf16>, %i: tensor<4xi8>) -> (tensor<4xbf16>, tensor<4xi8>) {
  %wide = glow.clip %b {min = 0xFF800000 : f32, max = 0x7F800000 : f32} : tensor<4xbf16>
  %keep = glow.clip %wide {min = -1.0 : f32, max = 1.0 : f32} : tensor<4xbf16>
  %all = glow.clip %i {min = -128.0 : f32, max = 127.0 : f32} : tensor<4xi8>
  func.return %keep, %all : tensor<4xbf16>, tensor<4xi8>
}

// -----

// A quantized relu whose zero point is the storage's least value keeps every value (what
// quantize-graph gives the relu after a convolution); with a zero point above it (signed
// or unsigned storage) it must stay.
// CHECK-LABEL: func.func @quantized_relu
// CHECK-NEXT:    %[[K1:.*]] = glow.relu %x : tensor<4x!glow.quant<i8, scale = 0.1, offset = -100>>
// CHECK-NEXT:    %[[K2:.*]] = glow.relu %u : tensor<4x!glow.quant<ui8, scale = 0.1, offset = 3>>
// CHECK-NEXT:    func.return %y, %[[K1]], %z, %[[K2]]
func.func @quantized_relu(%x: tensor<4x!glow.quant<i8, scale = 0.1, offset = -100>>, %y: tensor<4x!glow.quant<i8, scale = 0.1, offset = -128>>, %u: tensor<4x!glow.quant<ui8, scale = 0.1, offset = 3>>, %z: tensor<4x!glow.quant<ui8, scale = 0.1, offset = 0>>) -> (tensor<4x!glow.quant<i8, scale = 0.1, offset = -128>>, tensor<4x!glow.quant<i8, scale = 0.1, offset = -100>>, tensor<4x!glow.quant<ui8, scale = 0.1, offset = 0>>, tensor<4x!glow.quant<ui8, scale = 0.1, offset = 3>>) {
  %a = glow.relu %y : tensor<4x!glow.quant<i8, scale = 0.1, offset = -128>>
  %b = glow.relu %x : tensor<4x!glow.quant<i8, scale = 0.1, offset = -100>>
  %d = glow.relu %z : tensor<4x!glow.quant<ui8, scale = 0.1, offset = 0>>
  %e = glow.relu %u : tensor<4x!glow.quant<ui8, scale = 0.1, offset = 3>>
  func.return %a, %b, %d, %e : tensor<4x!glow.quant<i8, scale = 0.1, offset = -128>>, tensor<4x!glow.quant<i8, scale = 0.1, offset = -100>>, tensor<4x!glow.quant<ui8, scale = 0.1, offset = 0>>, tensor<4x!glow.quant<ui8, scale = 0.1, offset = 3>>
}
