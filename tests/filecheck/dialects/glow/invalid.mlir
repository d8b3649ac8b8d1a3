// Every verifier message of the glow dialect (each op's check(), the attribute accessors
// of base.py, the shape and type helpers and !glow.quant of types.py) and the parse errors
// a user can make, one per chunk, with MLIR's expected-error semantics: each chunk must
// fail at the annotated line with a message containing the annotated text, and
// --verify-diagnostics exits 1 otherwise (see ../../tools/verify-diagnostics.mlir).
// Messages say which op and what is wrong.
//
// RUN: glow-opt %s --split-input-file --verify-diagnostics


// ===== Checks every op shares (base.py, types.py)

func.func @relu_1(%x: tensor<4xf32>) {
  // expected-error @+1 {{'glow.relu' op has unknown attribute 'foo' (its attributes: none)}}
  %0 = glow.relu %x {foo = 1 : i64} : tensor<4xf32>
  func.return
}

// -----

func.func @max_pool_1(%x: tensor<1x3x8x8xf32>) {
  // expected-error @+1 {{'glow.max_pool' op has unknown attribute 'stride' (its attributes: kernels, strides, pads, layout)}}
  %0 = glow.max_pool %x {kernels = array<i64: 2, 2>, stride = array<i64: 2, 2>} : tensor<1x3x8x8xf32> -> tensor<1x3x4x4xf32>
  func.return
}

// -----

func.func @relu_2(%x: tensor<?x4xf32>) {
  // expected-error @+1 {{'glow.relu' op expects static shapes, got tensor<?x4xf32> (bind every dynamic dimension first)}}
  %0 = glow.relu %x : tensor<?x4xf32>
  func.return
}

// -----

func.func @leaky_relu_1(%x: tensor<4xf32>) {
  // expected-error @+1 {{'glow.leaky_relu' op requires attribute 'alpha'}}
  %0 = glow.leaky_relu %x : tensor<4xf32>
  func.return
}

// -----

func.func @transpose_1(%x: tensor<2x3xf32>) {
  // expected-error @+1 {{'glow.transpose' op attribute 'shuffle' must be array<i64: ...>, got [1 : i64, 0 : i64]}}
  %0 = glow.transpose %x {shuffle = [1, 0]} : tensor<2x3xf32> -> tensor<3x2xf32>
  func.return
}

// -----

func.func @transpose_2(%x: tensor<2x3xf32>) {
  // expected-error @+1 {{'glow.transpose' op attribute 'shuffle' must be array<i64: ...>, got array<i32: 1, 0>}}
  %0 = glow.transpose %x {shuffle = array<i32: 1, 0>} : tensor<2x3xf32> -> tensor<3x2xf32>
  func.return
}

// -----

func.func @resize_nearest_1(%x: tensor<1x4xf32>) {
  // expected-error @+1 {{'glow.resize_nearest' op attribute 'scale' must be array<f32: ...>, got 2.000000e+00 : f32}}
  %0 = glow.resize_nearest %x {scale = 2.0 : f32} : tensor<1x4xf32> -> tensor<2x8xf32>
  func.return
}

// -----

func.func @concat_1(%x: tensor<2x3xf32>) {
  // expected-error @+1 {{'glow.concat' op attribute 'dim' must be an integer, got 1.000000e+00 : f32}}
  %0 = glow.concat %x {dim = 1.0 : f32} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  func.return
}

// -----

func.func @leaky_relu_2(%x: tensor<4xf32>) {
  // expected-error @+1 {{'glow.leaky_relu' op attribute 'alpha' must be a float, got "small"}}
  %0 = glow.leaky_relu %x {alpha = "small"} : tensor<4xf32>
  func.return
}

// -----

func.func @arg_max_1(%x: tensor<2x3xf32>) {
  // expected-error @+1 {{'glow.arg_max' op attribute 'keep_dims' must be true or false, got 1 : i64}}
  %0 = glow.arg_max %x {axis = 1 : i64, keep_dims = 1 : i64} : tensor<2x3xf32> -> tensor<2x1xi64>
  func.return
}

// -----

func.func @arg_max_2(%x: tensor<2x3xf32>) {
  // expected-error @+1 {{'glow.arg_max' op attribute 'keep_dims' must be true or false, got 1 : index}}
  %0 = glow.arg_max %x {axis = 1 : i64, keep_dims = 1 : index} : tensor<2x3xf32> -> tensor<2x1xi64>
  func.return
}

// -----

func.func @gelu_1(%x: tensor<4xf32>) {
  // expected-error @+1 {{'glow.gelu' op attribute 'approximate' must be a string, got 1 : i64}}
  %0 = glow.gelu %x {approximate = 1 : i64} : tensor<4xf32>
  func.return
}

// -----

func.func @gelu_2(%x: tensor<4xf32>) {
  // expected-error @+1 {{'glow.gelu' op attribute 'approximate' must be one of 'none', 'tanh', got 'fast'}}
  %0 = glow.gelu %x {approximate = "fast"} : tensor<4xf32>
  func.return
}

// -----

func.func @soft_max_1(%x: tensor<2x3xf32>) {
  // expected-error @+1 {{'glow.soft_max' op axis 2 is out of range for rank 2}}
  %0 = glow.soft_max %x {axis = 2 : i64} : tensor<2x3xf32>
  func.return
}

// -----

func.func @soft_max_2(%x: tensor<2x3xf32>) {
  // expected-error @+1 {{'glow.soft_max' op axis -3 is out of range for rank 2}}
  %0 = glow.soft_max %x {axis = -3 : i64} : tensor<2x3xf32>
  func.return
}

// -----

// ===== !glow.quant (types.py)

// expected-error @+1 {{invalid type !glow.quant: !glow.quant storage must be an 8, 16 or 32 bit integer, got i4}}
func.func @parse_1(%x: tensor<4x!glow.quant<i4, scale = 0.5, offset = 0>>) {
  func.return
}

// -----

// expected-error @+1 {{invalid type !glow.quant: parameter 'storage' does not verify: f32 should be of base attribute integer_type}}
func.func @parse_2(%x: tensor<4x!glow.quant<f32, scale = 0.5, offset = 0>>) {
  func.return
}

// -----

// expected-error @+1 {{invalid type !glow.quant: !glow.quant scale must be positive and finite, got 0.0}}
func.func @parse_3(%x: tensor<4x!glow.quant<i8, scale = 0.0, offset = 0>>) {
  func.return
}

// -----

// expected-error @+1 {{invalid type !glow.quant: !glow.quant scale must be positive and finite, got -0.5}}
func.func @parse_4(%x: tensor<4x!glow.quant<i8, scale = -0.5, offset = 0>>) {
  func.return
}

// -----

// expected-error @+1 {{Expected ','}}
func.func @parse_5(%x: tensor<4x!glow.quant<i8, scale = 0.5>>) {
  func.return
}

// -----

// ===== Element-wise ops (elementwise.py)

func.func @sigmoid_1(%x: tensor<4xi32>) {
  // expected-error @+1 {{'glow.sigmoid' op operand must have floating-point elements, got i32}}
  %0 = glow.sigmoid %x : tensor<4xi32>
  func.return
}

// -----

func.func @relu_3(%x: tensor<4xi1>) {
  // expected-error @+1 {{'glow.relu' op operand must have numeric elements, got i1}}
  %0 = glow.relu %x : tensor<4xi1>
  func.return
}

// -----

func.func @not_1(%x: tensor<4xf32>) {
  // expected-error @+1 {{'glow.not' op operand must have i1 or integer elements, got f32}}
  %0 = glow.not %x : tensor<4xf32>
  func.return
}

// -----

func.func @relu_4(%x: tensor<4xf32>) {
  // expected-error @+1 {{'glow.relu' op result 'result' at position 0 does not verify: attribute tensor<4xf32> expected from variable 'T', but got tensor<5xf32>}}
  %0 = "glow.relu"(%x) : (tensor<4xf32>) -> tensor<5xf32>
  func.return
}

// -----

func.func @clip_1(%x: tensor<4xf32>) {
  // expected-error @+1 {{'glow.clip' op min (6.0) must not exceed max (0.0)}}
  %0 = glow.clip %x {min = 6.0 : f32, max = 0.0 : f32} : tensor<4xf32>
  func.return
}

// -----

func.func @clip_2(%x: tensor<4xf32>) {
  // expected-error @+1 {{'glow.clip' op requires attribute 'max'}}
  %0 = glow.clip %x {min = 0.0 : f32} : tensor<4xf32>
  func.return
}

// -----

func.func @add_1(%x: tensor<4xi1>, %y: tensor<4xi1>) {
  // expected-error @+1 {{'glow.add' op operands must have numeric elements, got i1}}
  %0 = glow.add %x, %y : tensor<4xi1>
  func.return
}

// -----

func.func @pow_1(%x: tensor<4xi32>, %y: tensor<4xi32>) {
  // expected-error @+1 {{'glow.pow' op operands must have floating-point elements, got i32}}
  %0 = glow.pow %x, %y : tensor<4xi32>
  func.return
}

// -----

func.func @xor_1(%x: tensor<4xf32>, %y: tensor<4xf32>) {
  // expected-error @+1 {{'glow.xor' op operands must have i1 or integer elements, got f32}}
  %0 = glow.xor %x, %y : tensor<4xf32>
  func.return
}

// -----

func.func @mul_1(%x: tensor<4xf32>, %y: tensor<5xf32>) {
  // expected-error @+1 {{'glow.mul' op operand 'rhs' at position 1 does not verify: attribute tensor<4xf32> expected from variable 'T', but got tensor<5xf32>}}
  %0 = "glow.mul"(%x, %y) : (tensor<4xf32>, tensor<5xf32>) -> tensor<4xf32>
  func.return
}

// -----

func.func @prelu_1(%x: tensor<4xi32>, %y: tensor<4xi32>) {
  // expected-error @+1 {{'glow.prelu' op operands must have floating-point elements, got i32}}
  %0 = glow.prelu %x, %y : tensor<4xi32>
  func.return
}

// -----

func.func @cmp_lt_1(%x: tensor<4xf32>, %y: tensor<4xf32>) {
  // expected-error @+1 {{'glow.cmp_lt' op result must have i1 elements, got f32}}
  %0 = glow.cmp_lt %x, %y : tensor<4xf32> -> tensor<4xf32>
  func.return
}

// -----

func.func @cmp_eq_1(%x: tensor<4xf32>, %y: tensor<4xf32>) {
  // expected-error @+1 {{'glow.cmp_eq' op operand and result must have equal shapes (broadcasting is an explicit glow.broadcast), got 4 and 5}}
  %0 = glow.cmp_eq %x, %y : tensor<4xf32> -> tensor<5xi1>
  func.return
}

// -----

func.func @cmp_lte_1(%x: tensor<4xf32>, %y: tensor<4xi32>) {
  // expected-error @+1 {{'glow.cmp_lte' op operand 'rhs' at position 1 does not verify: attribute tensor<4xf32> expected from variable 'T', but got tensor<4xi32>}}
  %0 = "glow.cmp_lte"(%x, %y) : (tensor<4xf32>, tensor<4xi32>) -> tensor<4xi1>
  func.return
}

// -----

func.func @select_1(%c: tensor<4xf32>, %x: tensor<4xf32>) {
  // expected-error @+1 {{'glow.select' op condition must have i1 elements, got f32}}
  %0 = glow.select %c, %x, %x : tensor<4xf32>, tensor<4xf32>
  func.return
}

// -----

func.func @select_2(%c: tensor<5xi1>, %x: tensor<4xf32>) {
  // expected-error @+1 {{'glow.select' op condition and result must have equal shapes (broadcasting is an explicit glow.broadcast), got 5 and 4}}
  %0 = glow.select %c, %x, %x : tensor<5xi1>, tensor<4xf32>
  func.return
}

// -----

func.func @convert_to_1(%x: tensor<4xf32>) {
  // expected-error @+1 {{'glow.convert_to' op operand and result must have equal shapes (broadcasting is an explicit glow.broadcast), got 4 and 2x2}}
  %0 = glow.convert_to %x : tensor<4xf32> -> tensor<2x2xi32>
  func.return
}

// -----

func.func @convert_to_2(%x: tensor<4xf32>) {
  // expected-error @+1 {{'glow.convert_to' op result is quantized; use glow.quantize/glow.dequantize}}
  %0 = glow.convert_to %x : tensor<4xf32> -> tensor<4x!glow.quant<i8, scale = 0.5, offset = 0>>
  func.return
}

// -----

func.func @convert_to_3(%x: tensor<4x!glow.quant<i8, scale = 0.5, offset = 0>>) {
  // expected-error @+1 {{'glow.convert_to' op operand is quantized; use glow.quantize/glow.dequantize}}
  %0 = glow.convert_to %x : tensor<4x!glow.quant<i8, scale = 0.5, offset = 0>> -> tensor<4xf32>
  func.return
}

// -----

func.func @quantize_1(%x: tensor<4xi32>) {
  // expected-error @+1 {{'glow.quantize' op operand must have floating-point elements, got i32}}
  %0 = glow.quantize %x : tensor<4xi32> -> tensor<4x!glow.quant<i8, scale = 0.5, offset = 0>>
  func.return
}

// -----

func.func @quantize_2(%x: tensor<4xf32>) {
  // expected-error @+1 {{'glow.quantize' op result must have quantized (!glow.quant) elements, got i8}}
  %0 = glow.quantize %x : tensor<4xf32> -> tensor<4xi8>
  func.return
}

// -----

func.func @quantize_3(%x: tensor<4xf32>) {
  // expected-error @+1 {{'glow.quantize' op operand and result must have equal shapes (broadcasting is an explicit glow.broadcast), got 4 and 8}}
  %0 = glow.quantize %x : tensor<4xf32> -> tensor<8x!glow.quant<i8, scale = 0.5, offset = 0>>
  func.return
}

// -----

func.func @dequantize_1(%x: tensor<4xi8>) {
  // expected-error @+1 {{'glow.dequantize' op operand must have quantized (!glow.quant) elements, got i8}}
  %0 = glow.dequantize %x : tensor<4xi8> -> tensor<4xf32>
  func.return
}

// -----

func.func @dequantize_2(%x: tensor<4x!glow.quant<i8, scale = 0.5, offset = 0>>) {
  // expected-error @+1 {{'glow.dequantize' op result must have floating-point elements, got i32}}
  %0 = glow.dequantize %x : tensor<4x!glow.quant<i8, scale = 0.5, offset = 0>> -> tensor<4xi32>
  func.return
}

// -----

func.func @rescale_quantized_1(%x: tensor<4xf32>) {
  // expected-error @+1 {{'glow.rescale_quantized' op operand must have quantized (!glow.quant) elements, got f32}}
  %0 = glow.rescale_quantized %x : tensor<4xf32> -> tensor<4x!glow.quant<i8, scale = 0.5, offset = 0>>
  func.return
}

// -----

func.func @rescale_quantized_2(%x: tensor<4x!glow.quant<i8, scale = 0.5, offset = 0>>) {
  // expected-error @+1 {{'glow.rescale_quantized' op result must have quantized (!glow.quant) elements, got f32}}
  %0 = glow.rescale_quantized %x : tensor<4x!glow.quant<i8, scale = 0.5, offset = 0>> -> tensor<4xf32>
  func.return
}

// -----

// ===== Inverse trigonometric ops (trigonometry.py)

func.func @acos_1(%x: tensor<4xi32>) {
  // expected-error @+1 {{'glow.acos' op operand must have floating-point elements, got i32}}
  %0 = glow.acos %x : tensor<4xi32>
  func.return
}

// -----

func.func @asin_1(%x: tensor<4xi1>) {
  // expected-error @+1 {{'glow.asin' op operand must have floating-point elements, got i1}}
  %0 = glow.asin %x : tensor<4xi1>
  func.return
}

// -----

func.func @atan_1(%x: tensor<4xf32>) {
  // expected-error @+1 {{'glow.atan' op result 'result' at position 0 does not verify: attribute tensor<4xf32> expected from variable 'T', but got tensor<4xf16>}}
  %0 = "glow.atan"(%x) : (tensor<4xf32>) -> tensor<4xf16>
  func.return
}

// -----

// ===== glow.convolution (nn.py)

func.func @convolution_1(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>, %b: tensor<4xf32>) {
  // expected-error @+1 {{'glow.convolution' op attribute 'layout' must be one of 'NCHW', 'NHWC', got 'NCWH'}}
  %0 = glow.convolution %x, %w, %b {kernels = array<i64: 3, 3>, pads = array<i64: 1, 1, 1, 1>, layout = "NCWH"} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>, tensor<4xf32>) -> tensor<1x4x8x8xf32>
  func.return
}

// -----

func.func @convolution_2(%x: tensor<3x8x8xf32>, %w: tensor<4x3x3x3xf32>, %b: tensor<4xf32>) {
  // expected-error @+1 {{'glow.convolution' op input must have rank 4, got rank 3 (tensor<3x8x8xf32>)}}
  %0 = glow.convolution %x, %w, %b {kernels = array<i64: 3, 3>} : (tensor<3x8x8xf32>, tensor<4x3x3x3xf32>, tensor<4xf32>) -> tensor<1x4x8x8xf32>
  func.return
}

// -----

func.func @convolution_3(%x: tensor<1x3x8x8xf32>, %w: tensor<4x27xf32>, %b: tensor<4xf32>) {
  // expected-error @+1 {{'glow.convolution' op filter must have rank 4, got rank 2 (tensor<4x27xf32>)}}
  %0 = glow.convolution %x, %w, %b {kernels = array<i64: 3, 3>} : (tensor<1x3x8x8xf32>, tensor<4x27xf32>, tensor<4xf32>) -> tensor<1x4x8x8xf32>
  func.return
}

// -----

func.func @convolution_4(%x: tensor<1x3x8x8xi32>, %w: tensor<4x3x3x3xi32>, %b: tensor<4xi32>) {
  // expected-error @+1 {{'glow.convolution' op input must have floating-point or quantized elements, got i32}}
  %0 = glow.convolution %x, %w, %b {kernels = array<i64: 3, 3>} : (tensor<1x3x8x8xi32>, tensor<4x3x3x3xi32>, tensor<4xi32>) -> tensor<1x4x6x6xi32>
  func.return
}

// -----

func.func @convolution_5(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf16>, %b: tensor<4xf32>) {
  // expected-error @+1 {{'glow.convolution' op input and filter must have the same element type, got f32 and f16}}
  %0 = glow.convolution %x, %w, %b {kernels = array<i64: 3, 3>} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf16>, tensor<4xf32>) -> tensor<1x4x6x6xf32>
  func.return
}

// -----

func.func @convolution_6(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>, %b: tensor<4xf32>) {
  // expected-error @+1 {{'glow.convolution' op input and result must have the same element type, got f32 and f16}}
  %0 = glow.convolution %x, %w, %b {kernels = array<i64: 3, 3>} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>, tensor<4xf32>) -> tensor<1x4x6x6xf16>
  func.return
}

// -----

func.func @convolution_7(%x: tensor<1x3x8x8x!glow.quant<i8, scale = 0.5, offset = 0>>, %w: tensor<4x3x3x3xi8>, %b: tensor<4xi32>) {
  // expected-error @+1 {{'glow.convolution' op filter must have quantized (!glow.quant) elements, got i8}}
  %0 = glow.convolution %x, %w, %b {kernels = array<i64: 3, 3>} : (tensor<1x3x8x8x!glow.quant<i8, scale = 0.5, offset = 0>>, tensor<4x3x3x3xi8>, tensor<4xi32>) -> tensor<1x4x6x6x!glow.quant<i8, scale = 0.5, offset = 0>>
  func.return
}

// -----

func.func @convolution_8(%x: tensor<1x3x8x8x!glow.quant<i8, scale = 0.5, offset = 0>>, %w: tensor<4x3x3x3x!glow.quant<i8, scale = 0.5, offset = 0>>, %b: tensor<4xi1>) {
  // expected-error @+1 {{'glow.convolution' op bias must have quantized (!glow.quant), integer or floating-point elements, got i1}}
  %0 = glow.convolution %x, %w, %b {kernels = array<i64: 3, 3>} : (tensor<1x3x8x8x!glow.quant<i8, scale = 0.5, offset = 0>>, tensor<4x3x3x3x!glow.quant<i8, scale = 0.5, offset = 0>>, tensor<4xi1>) -> tensor<1x4x6x6x!glow.quant<i8, scale = 0.5, offset = 0>>
  func.return
}

// -----

func.func @convolution_9(%x: tensor<1x3x8x8x!glow.quant<i8, scale = 0.5, offset = 0>>, %w: tensor<4x3x3x3x!glow.quant<i8, scale = 0.5, offset = 0>>, %b: tensor<4xi32>) {
  // expected-error @+1 {{'glow.convolution' op result must have quantized (!glow.quant) elements, got f32}}
  %0 = glow.convolution %x, %w, %b {kernels = array<i64: 3, 3>} : (tensor<1x3x8x8x!glow.quant<i8, scale = 0.5, offset = 0>>, tensor<4x3x3x3x!glow.quant<i8, scale = 0.5, offset = 0>>, tensor<4xi32>) -> tensor<1x4x6x6xf32>
  func.return
}

// -----

func.func @convolution_10(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>, %b: tensor<4xf32>) {
  // expected-error @+1 {{'glow.convolution' op requires attribute 'kernels'}}
  %0 = glow.convolution %x, %w, %b {pads = array<i64: 1, 1, 1, 1>} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>, tensor<4xf32>) -> tensor<1x4x8x8xf32>
  func.return
}

// -----

func.func @convolution_11(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>, %b: tensor<4xf32>) {
  // expected-error @+1 {{'glow.convolution' op kernels must be 2 positive integers, got [3]}}
  %0 = glow.convolution %x, %w, %b {kernels = array<i64: 3>} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>, tensor<4xf32>) -> tensor<1x4x8x8xf32>
  func.return
}

// -----

func.func @convolution_12(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>, %b: tensor<4xf32>) {
  // expected-error @+1 {{'glow.convolution' op kernels must be 2 positive integers, got [3, 0]}}
  %0 = glow.convolution %x, %w, %b {kernels = array<i64: 3, 0>} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>, tensor<4xf32>) -> tensor<1x4x8x8xf32>
  func.return
}

// -----

func.func @convolution_13(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>, %b: tensor<4xf32>) {
  // expected-error @+1 {{'glow.convolution' op strides must be 2 positive integers, got [-1, 1]}}
  %0 = glow.convolution %x, %w, %b {kernels = array<i64: 3, 3>, strides = array<i64: -1, 1>} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>, tensor<4xf32>) -> tensor<1x4x8x8xf32>
  func.return
}

// -----

func.func @convolution_14(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>, %b: tensor<4xf32>) {
  // expected-error @+1 {{'glow.convolution' op pads must be 4 non-negative integers [top, left, bottom, right], got [1, 1]}}
  %0 = glow.convolution %x, %w, %b {kernels = array<i64: 3, 3>, pads = array<i64: 1, 1>} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>, tensor<4xf32>) -> tensor<1x4x8x8xf32>
  func.return
}

// -----

func.func @convolution_15(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>, %b: tensor<4xf32>) {
  // expected-error @+1 {{'glow.convolution' op pads must be 4 non-negative integers [top, left, bottom, right], got [1, -1, 1, 1]}}
  %0 = glow.convolution %x, %w, %b {kernels = array<i64: 3, 3>, pads = array<i64: 1, -1, 1, 1>} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>, tensor<4xf32>) -> tensor<1x4x8x8xf32>
  func.return
}

// -----

func.func @convolution_16(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>, %b: tensor<4xf32>) {
  // expected-error @+1 {{'glow.convolution' op dilation must be 2 positive integers, got [0, 1]}}
  %0 = glow.convolution %x, %w, %b {kernels = array<i64: 3, 3>, dilation = array<i64: 0, 1>} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>, tensor<4xf32>) -> tensor<1x4x8x8xf32>
  func.return
}

// -----

func.func @convolution_17(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>, %b: tensor<4xf32>) {
  // expected-error @+1 {{'glow.convolution' op kernel H extent 9 exceeds the padded input H 8}}
  %0 = glow.convolution %x, %w, %b {kernels = array<i64: 3, 3>, dilation = array<i64: 4, 1>} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>, tensor<4xf32>) -> tensor<1x4x8x8xf32>
  func.return
}

// -----

func.func @convolution_18(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>, %b: tensor<4xf32>) {
  // expected-error @+1 {{'glow.convolution' op group must be positive, got 0}}
  %0 = glow.convolution %x, %w, %b {kernels = array<i64: 3, 3>, pads = array<i64: 1, 1, 1, 1>, group = 0 : i64} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>, tensor<4xf32>) -> tensor<1x4x8x8xf32>
  func.return
}

// -----

func.func @convolution_19(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>, %b: tensor<4xf32>) {
  // expected-error @+1 {{'glow.convolution' op group 2 does not divide the 3 input channels}}
  %0 = glow.convolution %x, %w, %b {kernels = array<i64: 3, 3>, pads = array<i64: 1, 1, 1, 1>, group = 2 : i64} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>, tensor<4xf32>) -> tensor<1x4x8x8xf32>
  func.return
}

// -----

func.func @convolution_20(%x: tensor<1x4x8x8xf32>, %w: tensor<5x2x3x3xf32>, %b: tensor<5xf32>) {
  // expected-error @+1 {{'glow.convolution' op group 2 does not divide the 5 output channels}}
  %0 = glow.convolution %x, %w, %b {kernels = array<i64: 3, 3>, pads = array<i64: 1, 1, 1, 1>, group = 2 : i64} : (tensor<1x4x8x8xf32>, tensor<5x2x3x3xf32>, tensor<5xf32>) -> tensor<1x5x8x8xf32>
  func.return
}

// -----

func.func @convolution_21(%x: tensor<1x4x8x8xf32>, %w: tensor<4x4x3x3xf32>, %b: tensor<4xf32>) {
  // expected-error @+1 {{'glow.convolution' op filter shape is 4x4x3x3, expected 4x2x3x3 (4 filters of 2 channels, kernels [3, 3])}}
  %0 = glow.convolution %x, %w, %b {kernels = array<i64: 3, 3>, pads = array<i64: 1, 1, 1, 1>, group = 2 : i64} : (tensor<1x4x8x8xf32>, tensor<4x4x3x3xf32>, tensor<4xf32>) -> tensor<1x4x8x8xf32>
  func.return
}

// -----

func.func @convolution_22(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>, %b: tensor<8xf32>) {
  // expected-error @+1 {{'glow.convolution' op bias shape is 8, expected 4 (one per output channel)}}
  %0 = glow.convolution %x, %w, %b {kernels = array<i64: 3, 3>, pads = array<i64: 1, 1, 1, 1>} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>, tensor<8xf32>) -> tensor<1x4x8x8xf32>
  func.return
}

// -----

func.func @convolution_23(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>, %b: tensor<4xf32>) {
  // expected-error @+1 {{'glow.convolution' op result shape is 1x4x8x8, expected 1x4x4x4 (input 1x3x8x8, strides [2, 2], pads [1, 1, 1, 1], dilation [1, 1])}}
  %0 = glow.convolution %x, %w, %b {kernels = array<i64: 3, 3>, strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>, tensor<4xf32>) -> tensor<1x4x8x8xf32>
  func.return
}

// -----

func.func @convolution_24(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>, %b: tensor<4xf32>) {
  // expected-error @+1 {{'glow.convolution' op attribute 'fused_activation' must be one of 'none', 'relu', 'sigmoid', 'tanh', 'leaky_relu', 'clip', got 'gelu'}}
  %0 = glow.convolution %x, %w, %b {kernels = array<i64: 3, 3>, pads = array<i64: 1, 1, 1, 1>, fused_activation = "gelu"} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>, tensor<4xf32>) -> tensor<1x4x8x8xf32>
  func.return
}

// -----

func.func @convolution_25(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>, %b: tensor<4xf32>) {
  // expected-error @+1 {{'glow.convolution' op fused_activation 'clip' takes 2 argument(s), got 1}}
  %0 = glow.convolution %x, %w, %b {kernels = array<i64: 3, 3>, pads = array<i64: 1, 1, 1, 1>, fused_activation = "clip", fused_activation_args = array<f32: 6.0>} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>, tensor<4xf32>) -> tensor<1x4x8x8xf32>
  func.return
}

// -----

func.func @convolution_26(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>, %b: tensor<4xf32>) {
  // expected-error @+1 {{'glow.convolution' op fused_activation 'none' takes 0 argument(s), got 1}}
  %0 = glow.convolution %x, %w, %b {kernels = array<i64: 3, 3>, pads = array<i64: 1, 1, 1, 1>, fused_activation_args = array<f32: 0.1>} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>, tensor<4xf32>) -> tensor<1x4x8x8xf32>
  func.return
}

// -----

// ===== Pooling (nn.py)

func.func @max_pool_2(%x: tensor<1x3x8x8xf32>) {
  // expected-error @+1 {{'glow.max_pool' op input and result must have the same element type, got f32 and f16}}
  %0 = glow.max_pool %x {kernels = array<i64: 2, 2>} : tensor<1x3x8x8xf32> -> tensor<1x3x7x7xf16>
  func.return
}

// -----

func.func @max_pool_3(%x: tensor<3x8x8xf32>) {
  // expected-error @+1 {{'glow.max_pool' op input must have rank 4, got rank 3 (tensor<3x8x8xf32>)}}
  %0 = glow.max_pool %x {kernels = array<i64: 2, 2>} : tensor<3x8x8xf32> -> tensor<3x7x7xf32>
  func.return
}

// -----

func.func @max_pool_4(%x: tensor<1x3x8x8xf32>) {
  // expected-error @+1 {{'glow.max_pool' op result shape is 1x3x8x8, expected 1x3x4x4 (kernels [2, 2], strides [2, 2], pads [0, 0, 0, 0])}}
  %0 = glow.max_pool %x {kernels = array<i64: 2, 2>, strides = array<i64: 2, 2>} : tensor<1x3x8x8xf32> -> tensor<1x3x8x8xf32>
  func.return
}

// -----

func.func @max_pool_5(%x: tensor<1x8x8x3xf32>) {
  // expected-error @+1 {{'glow.max_pool' op result shape is 1x3x4x4, expected 1x4x4x3 (kernels [2, 2], strides [2, 2], pads [0, 0, 0, 0])}}
  %0 = glow.max_pool %x {kernels = array<i64: 2, 2>, strides = array<i64: 2, 2>, layout = "NHWC"} : tensor<1x8x8x3xf32> -> tensor<1x3x4x4xf32>
  func.return
}

// -----

func.func @max_pool_6(%x: tensor<1x3x8x8xf32>) {
  // expected-error @+1 {{'glow.max_pool' op kernel H extent 9 exceeds the padded input H 8}}
  %0 = glow.max_pool %x {kernels = array<i64: 9, 2>} : tensor<1x3x8x8xf32> -> tensor<1x3x1x7xf32>
  func.return
}

// -----

func.func @max_pool_7(%x: tensor<1x3x8x8xf32>) {
  // expected-error @+1 {{'glow.max_pool' op has unknown attribute 'dilation' (its attributes: kernels, strides, pads, layout)}}
  %0 = glow.max_pool %x {kernels = array<i64: 2, 2>, dilation = array<i64: 1, 1>} : tensor<1x3x8x8xf32> -> tensor<1x3x7x7xf32>
  func.return
}

// -----

func.func @avg_pool_1(%x: tensor<1x3x8x8xf32>) {
  // expected-error @+1 {{'glow.avg_pool' op attribute 'count_include_pad' must be true or false, got 1 : i32}}
  %0 = glow.avg_pool %x {kernels = array<i64: 2, 2>, count_include_pad = 1 : i32} : tensor<1x3x8x8xf32> -> tensor<1x3x7x7xf32>
  func.return
}

// -----

func.func @avg_pool_2(%x: tensor<1x3x8x8xf32>) {
  // expected-error @+1 {{'glow.avg_pool' op pads must be 4 non-negative integers [top, left, bottom, right], got [0, 0, 0]}}
  %0 = glow.avg_pool %x {kernels = array<i64: 2, 2>, pads = array<i64: 0, 0, 0>} : tensor<1x3x8x8xf32> -> tensor<1x3x7x7xf32>
  func.return
}

// -----

func.func @adaptive_avg_pool_1(%x: tensor<1x3x8x8xf32>) {
  // expected-error @+1 {{'glow.adaptive_avg_pool' op result must have rank 4, got rank 3 (tensor<3x1x1xf32>)}}
  %0 = glow.adaptive_avg_pool %x : tensor<1x3x8x8xf32> -> tensor<3x1x1xf32>
  func.return
}

// -----

func.func @adaptive_avg_pool_2(%x: tensor<1x3x8x8xf32>) {
  // expected-error @+1 {{'glow.adaptive_avg_pool' op result batch and channels 1x4 must equal the input's 1x3}}
  %0 = glow.adaptive_avg_pool %x : tensor<1x3x8x8xf32> -> tensor<1x4x1x1xf32>
  func.return
}

// -----

func.func @adaptive_avg_pool_3(%x: tensor<1x3x8x8xf32>) {
  // expected-error @+1 {{'glow.adaptive_avg_pool' op result spatial dims must be positive}}
  %0 = glow.adaptive_avg_pool %x : tensor<1x3x8x8xf32> -> tensor<1x3x0x1xf32>
  func.return
}

// -----

func.func @adaptive_avg_pool_4(%x: tensor<1x3x8x8xf32>) {
  // expected-error @+1 {{'glow.adaptive_avg_pool' op input and result must have the same element type, got f32 and f16}}
  %0 = glow.adaptive_avg_pool %x : tensor<1x3x8x8xf32> -> tensor<1x3x1x1xf16>
  func.return
}

// -----

// ===== Dense layers (nn.py)

func.func @fully_connected_1(%x: tensor<16x8x64xf32>, %w: tensor<512x10xf32>, %b: tensor<10xf32>) {
  // expected-error @+1 {{'glow.fully_connected' op input must have rank 2, got rank 3 (tensor<16x8x64xf32>)}}
  %0 = glow.fully_connected %x, %w, %b : (tensor<16x8x64xf32>, tensor<512x10xf32>, tensor<10xf32>) -> tensor<16x10xf32>
  func.return
}

// -----

func.func @fully_connected_2(%x: tensor<16x512xf32>, %w: tensor<5120xf32>, %b: tensor<10xf32>) {
  // expected-error @+1 {{'glow.fully_connected' op weights must have rank 2, got rank 1 (tensor<5120xf32>)}}
  %0 = glow.fully_connected %x, %w, %b : (tensor<16x512xf32>, tensor<5120xf32>, tensor<10xf32>) -> tensor<16x10xf32>
  func.return
}

// -----

func.func @fully_connected_3(%x: tensor<16x512xf32>, %w: tensor<256x10xf32>, %b: tensor<10xf32>) {
  // expected-error @+1 {{'glow.fully_connected' op input columns 512 must equal weights rows 256}}
  %0 = glow.fully_connected %x, %w, %b : (tensor<16x512xf32>, tensor<256x10xf32>, tensor<10xf32>) -> tensor<16x10xf32>
  func.return
}

// -----

func.func @fully_connected_4(%x: tensor<16x512xf32>, %w: tensor<512x10xf32>, %b: tensor<16xf32>) {
  // expected-error @+1 {{'glow.fully_connected' op bias shape is 16, expected 10}}
  %0 = glow.fully_connected %x, %w, %b : (tensor<16x512xf32>, tensor<512x10xf32>, tensor<16xf32>) -> tensor<16x10xf32>
  func.return
}

// -----

func.func @fully_connected_5(%x: tensor<16x512xf32>, %w: tensor<512x10xf32>, %b: tensor<10xf32>) {
  // expected-error @+1 {{'glow.fully_connected' op result shape is 10x16, expected 16x10}}
  %0 = glow.fully_connected %x, %w, %b : (tensor<16x512xf32>, tensor<512x10xf32>, tensor<10xf32>) -> tensor<10x16xf32>
  func.return
}

// -----

func.func @fully_connected_6(%x: tensor<16x512xf32>, %w: tensor<512x10xf16>, %b: tensor<10xf32>) {
  // expected-error @+1 {{'glow.fully_connected' op input and weights must have the same element type, got f32 and f16}}
  %0 = glow.fully_connected %x, %w, %b : (tensor<16x512xf32>, tensor<512x10xf16>, tensor<10xf32>) -> tensor<16x10xf32>
  func.return
}

// -----

func.func @fully_connected_7(%x: tensor<16x512x!glow.quant<i8, scale = 0.5, offset = 0>>, %w: tensor<512x10xi8>, %b: tensor<10xi32>) {
  // expected-error @+1 {{'glow.fully_connected' op weights must have quantized (!glow.quant) elements, got i8}}
  %0 = glow.fully_connected %x, %w, %b : (tensor<16x512x!glow.quant<i8, scale = 0.5, offset = 0>>, tensor<512x10xi8>, tensor<10xi32>) -> tensor<16x10x!glow.quant<i8, scale = 0.5, offset = 0>>
  func.return
}

// -----

func.func @fully_connected_8(%x: tensor<16x512xf32>, %w: tensor<512x10xf32>, %b: tensor<10xf32>) {
  // expected-error @+1 {{'glow.fully_connected' op fused_activation 'leaky_relu' takes 1 argument(s), got 0}}
  %0 = glow.fully_connected %x, %w, %b {fused_activation = "leaky_relu"} : (tensor<16x512xf32>, tensor<512x10xf32>, tensor<10xf32>) -> tensor<16x10xf32>
  func.return
}

// -----

func.func @fully_connected_panels_1(%x: tensor<16x512xf32>, %p: tensor<16x512x64xf32>, %b: tensor<1000xf32>) {
  // expected-error @+1 {{'glow.fully_connected' op weights shape is 16x512x64, expected 32x512x32 ([512, 1000] weights in panels of 32 columns)}}
  %0 = glow.fully_connected %x, %p, %b {gemm_panels = 32 : i64} : (tensor<16x512xf32>, tensor<16x512x64xf32>, tensor<1000xf32>) -> tensor<16x1000xf32>
  func.return
}

// -----

func.func @fully_connected_panels_2(%x: tensor<16x512xf32>, %p: tensor<100x512x10xf32>, %b: tensor<1000xf32>) {
  // expected-error @+1 {{'glow.fully_connected' op gemm_panels is a positive multiple of 8 (columns per panel), got 10}}
  %0 = glow.fully_connected %x, %p, %b {gemm_panels = 10 : i64} : (tensor<16x512xf32>, tensor<100x512x10xf32>, tensor<1000xf32>) -> tensor<16x1000xf32>
  func.return
}

// -----

func.func @fully_connected_panels_3(%x: tensor<16x512xf32>, %w: tensor<512x1000xf32>, %b: tensor<1000xf32>) {
  // expected-error @+1 {{'glow.fully_connected' op weights shape is 512x1000, expected 16x512x64 ([512, 1000] weights in panels of 64 columns)}}
  %0 = glow.fully_connected %x, %w, %b {gemm_panels = 64 : i64} : (tensor<16x512xf32>, tensor<512x1000xf32>, tensor<1000xf32>) -> tensor<16x1000xf32>
  func.return
}

// -----

func.func @mat_mul_panels_1(%x: tensor<16x256xf32>, %p: tensor<16x512x64xf32>) {
  // expected-error @+1 {{'glow.mat_mul' op rhs shape is 16x512x64, expected 16x256x64 ([256, 1000] weights in panels of 64 columns)}}
  %0 = glow.mat_mul %x, %p {gemm_panels = 64 : i64} : (tensor<16x256xf32>, tensor<16x512x64xf32>) -> tensor<16x1000xf32>
  func.return
}

// -----

func.func @mat_mul_panels_2(%x: tensor<16x512x!glow.quant<i8, scale = 0.5, offset = 0>>, %p: tensor<16x512x64x!glow.quant<i8, scale = 0.5, offset = 0>>) {
  // expected-error @+1 {{'glow.mat_mul' op rhs must have floating-point (gemm_panels) elements}}
  %0 = glow.mat_mul %x, %p {gemm_panels = 64 : i64} : (tensor<16x512x!glow.quant<i8, scale = 0.5, offset = 0>>, tensor<16x512x64x!glow.quant<i8, scale = 0.5, offset = 0>>) -> tensor<16x1000x!glow.quant<i8, scale = 0.5, offset = 0>>
  func.return
}

// -----

func.func @mat_mul_1(%a: tensor<2x3x4xf32>, %b: tensor<4x5xf32>) {
  // expected-error @+1 {{'glow.mat_mul' op lhs must have rank 2, got rank 3 (tensor<2x3x4xf32>)}}
  %0 = glow.mat_mul %a, %b : (tensor<2x3x4xf32>, tensor<4x5xf32>) -> tensor<2x5xf32>
  func.return
}

// -----

func.func @mat_mul_2(%a: tensor<3x4xf32>, %b: tensor<4xf32>) {
  // expected-error @+1 {{'glow.mat_mul' op rhs must have rank 2, got rank 1 (tensor<4xf32>)}}
  %0 = glow.mat_mul %a, %b : (tensor<3x4xf32>, tensor<4xf32>) -> tensor<3xf32>
  func.return
}

// -----

func.func @mat_mul_3(%a: tensor<3x4xf32>, %b: tensor<5x6xf32>) {
  // expected-error @+1 {{'glow.mat_mul' op lhs columns 4 must equal rhs rows 5}}
  %0 = glow.mat_mul %a, %b : (tensor<3x4xf32>, tensor<5x6xf32>) -> tensor<3x6xf32>
  func.return
}

// -----

func.func @mat_mul_4(%a: tensor<3x4xf32>, %b: tensor<4x6xf32>) {
  // expected-error @+1 {{'glow.mat_mul' op result shape is 3x4, expected 3x6}}
  %0 = glow.mat_mul %a, %b : (tensor<3x4xf32>, tensor<4x6xf32>) -> tensor<3x4xf32>
  func.return
}

// -----

func.func @mat_mul_5(%a: tensor<3x4xf32>, %b: tensor<4x6xi32>) {
  // expected-error @+1 {{'glow.mat_mul' op lhs and rhs must have the same element type, got f32 and i32}}
  %0 = glow.mat_mul %a, %b : (tensor<3x4xf32>, tensor<4x6xi32>) -> tensor<3x6xf32>
  func.return
}

// -----

func.func @batch_mat_mul_1(%a: tensor<12x64xf32>, %b: tensor<12x64x32xf32>) {
  // expected-error @+1 {{'glow.batch_mat_mul' op lhs must have rank 3, got rank 2 (tensor<12x64xf32>)}}
  %0 = glow.batch_mat_mul %a, %b : (tensor<12x64xf32>, tensor<12x64x32xf32>) -> tensor<12x64x32xf32>
  func.return
}

// -----

func.func @batch_mat_mul_2(%a: tensor<12x8x64xf32>, %b: tensor<6x64x32xf32>) {
  // expected-error @+1 {{'glow.batch_mat_mul' op lhs batch 12 must equal rhs batch 6}}
  %0 = glow.batch_mat_mul %a, %b : (tensor<12x8x64xf32>, tensor<6x64x32xf32>) -> tensor<12x8x32xf32>
  func.return
}

// -----

func.func @batch_mat_mul_3(%a: tensor<12x8x64xf32>, %b: tensor<12x32x64xf32>) {
  // expected-error @+1 {{'glow.batch_mat_mul' op lhs columns 64 must equal rhs rows 32}}
  %0 = glow.batch_mat_mul %a, %b : (tensor<12x8x64xf32>, tensor<12x32x64xf32>) -> tensor<12x8x64xf32>
  func.return
}

// -----

func.func @batch_mat_mul_4(%a: tensor<12x8x64xf32>, %b: tensor<12x64x32xf32>) {
  // expected-error @+1 {{'glow.batch_mat_mul' op result shape is 8x12x32, expected 12x8x32}}
  %0 = glow.batch_mat_mul %a, %b : (tensor<12x8x64xf32>, tensor<12x64x32xf32>) -> tensor<8x12x32xf32>
  func.return
}

// -----

func.func @batch_mat_mul_5(%a: tensor<12x8x64xf32>, %b: tensor<12x64x32xf16>) {
  // expected-error @+1 {{'glow.batch_mat_mul' op lhs and rhs must have the same element type, got f32 and f16}}
  %0 = glow.batch_mat_mul %a, %b : (tensor<12x8x64xf32>, tensor<12x64x32xf16>) -> tensor<12x8x32xf32>
  func.return
}

// -----

func.func @batched_add_1(%a: tensor<f32>, %b: tensor<f32>) {
  // expected-error @+1 {{'glow.batched_add' op batch must have rank >= 1}}
  %0 = glow.batched_add %a, %b : (tensor<f32>, tensor<f32>) -> tensor<f32>
  func.return
}

// -----

func.func @batched_add_2(%a: tensor<8x16xf32>, %b: tensor<8xf32>) {
  // expected-error @+1 {{'glow.batched_add' op slice shape is 8, expected 16 (the batch without its first dim)}}
  %0 = glow.batched_add %a, %b : (tensor<8x16xf32>, tensor<8xf32>) -> tensor<8x16xf32>
  func.return
}

// -----

func.func @batched_add_3(%a: tensor<8x16xf32>, %b: tensor<16xf32>) {
  // expected-error @+1 {{'glow.batched_add' op result type tensor<8x16xf16> must equal the batch type tensor<8x16xf32>}}
  %0 = glow.batched_add %a, %b : (tensor<8x16xf32>, tensor<16xf32>) -> tensor<8x16xf16>
  func.return
}

// -----

// ===== Normalization, soft-max (nn.py)

func.func @batch_normalization_1(%x: tensor<64xf32>, %s: tensor<64xf32>, %b: tensor<64xf32>, %m: tensor<64xf32>, %v: tensor<64xf32>) {
  // expected-error @+1 {{'glow.batch_normalization' op input must have rank >= 2, got 1}}
  %0 = glow.batch_normalization %x, %s, %b, %m, %v : (tensor<64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>) -> tensor<64xf32>
  func.return
}

// -----

func.func @batch_normalization_2(%x: tensor<1x64x4x4xi8>, %s: tensor<64xf32>, %b: tensor<64xf32>, %m: tensor<64xf32>, %v: tensor<64xf32>) {
  // expected-error @+1 {{'glow.batch_normalization' op input must have floating-point elements, got i8}}
  %0 = glow.batch_normalization %x, %s, %b, %m, %v : (tensor<1x64x4x4xi8>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>) -> tensor<1x64x4x4xi8>
  func.return
}

// -----

func.func @batch_normalization_3(%x: tensor<1x64x4x4xf32>, %s: tensor<64xf32>, %b: tensor<64xf32>, %m: tensor<64xf32>, %v: tensor<64xf32>) {
  // expected-error @+1 {{'glow.batch_normalization' op channel_idx 4 is out of range for rank 4}}
  %0 = glow.batch_normalization %x, %s, %b, %m, %v {channel_idx = 4 : i64} : (tensor<1x64x4x4xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>) -> tensor<1x64x4x4xf32>
  func.return
}

// -----

func.func @batch_normalization_4(%x: tensor<1x4x4x64xf32>, %s: tensor<64xf32>, %b: tensor<64xf32>, %m: tensor<64xf32>, %v: tensor<64xf32>) {
  // expected-error @+1 {{'glow.batch_normalization' op scale shape is 64, expected 4 (one per channel)}}
  %0 = glow.batch_normalization %x, %s, %b, %m, %v : (tensor<1x4x4x64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>) -> tensor<1x4x4x64xf32>
  func.return
}

// -----

func.func @batch_normalization_5(%x: tensor<1x64x4x4xf32>, %s: tensor<64xf32>, %b: tensor<64xf32>, %m: tensor<64xf32>, %v: tensor<32xf32>) {
  // expected-error @+1 {{'glow.batch_normalization' op var shape is 32, expected 64 (one per channel)}}
  %0 = glow.batch_normalization %x, %s, %b, %m, %v : (tensor<1x64x4x4xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<32xf32>) -> tensor<1x64x4x4xf32>
  func.return
}

// -----

func.func @batch_normalization_6(%x: tensor<1x64x4x4xf32>, %s: tensor<64xf32>, %b: tensor<64xf32>, %m: tensor<64xf32>, %v: tensor<64xf32>) {
  // expected-error @+1 {{'glow.batch_normalization' op result type tensor<1x64x2x2xf32> must equal the input type tensor<1x64x4x4xf32>}}
  %0 = glow.batch_normalization %x, %s, %b, %m, %v : (tensor<1x64x4x4xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>) -> tensor<1x64x2x2xf32>
  func.return
}

// -----

func.func @batch_normalization_7(%x: tensor<1x64x4x4xf32>, %s: tensor<64xf32>, %b: tensor<64xf32>, %m: tensor<64xf32>, %v: tensor<64xf32>) {
  // expected-error @+1 {{'glow.batch_normalization' op attribute 'epsilon' must be a float, got "tiny"}}
  %0 = glow.batch_normalization %x, %s, %b, %m, %v {epsilon = "tiny"} : (tensor<1x64x4x4xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>) -> tensor<1x64x4x4xf32>
  func.return
}

// -----

func.func @layer_normalization_1(%x: tensor<2x128x768xi32>, %g: tensor<768xi32>, %b: tensor<768xi32>) {
  // expected-error @+1 {{'glow.layer_normalization' op input must have floating-point elements, got i32}}
  %0 = glow.layer_normalization %x, %g, %b : (tensor<2x128x768xi32>, tensor<768xi32>, tensor<768xi32>) -> tensor<2x128x768xi32>
  func.return
}

// -----

func.func @layer_normalization_2(%x: tensor<2x128x768xf32>, %g: tensor<128xf32>, %b: tensor<128xf32>) {
  // expected-error @+1 {{'glow.layer_normalization' op scale shape 128 must equal the trailing dims of the input 2x128x768}}
  %0 = glow.layer_normalization %x, %g, %b : (tensor<2x128x768xf32>, tensor<128xf32>, tensor<128xf32>) -> tensor<2x128x768xf32>
  func.return
}

// -----

func.func @layer_normalization_3(%x: tensor<2x128x768xf32>, %g: tensor<768xf32>, %b: tensor<1x768xf32>) {
  // expected-error @+1 {{'glow.layer_normalization' op bias shape is 1x768, expected 768 (same as scale)}}
  %0 = glow.layer_normalization %x, %g, %b : (tensor<2x128x768xf32>, tensor<768xf32>, tensor<1x768xf32>) -> tensor<2x128x768xf32>
  func.return
}

// -----

func.func @layer_normalization_4(%x: tensor<2x128x768xf32>, %g: tensor<768xf32>, %b: tensor<768xf32>) {
  // expected-error @+1 {{'glow.layer_normalization' op result type tensor<2x128x768xf16> must equal the input type tensor<2x128x768xf32>}}
  %0 = glow.layer_normalization %x, %g, %b : (tensor<2x128x768xf32>, tensor<768xf32>, tensor<768xf32>) -> tensor<2x128x768xf16>
  func.return
}

// -----

func.func @local_response_normalization_1(%x: tensor<1x64x8x8xf32>) {
  // expected-error @+1 {{'glow.local_response_normalization' op attribute 'layout' must be one of 'NCHW', 'NHWC', got 'CHWN'}}
  %0 = glow.local_response_normalization %x {half_window_size = 2 : i64, layout = "CHWN"} : tensor<1x64x8x8xf32>
  func.return
}

// -----

func.func @local_response_normalization_2(%x: tensor<64x8x8xf32>) {
  // expected-error @+1 {{'glow.local_response_normalization' op input must have rank 4, got rank 3 (tensor<64x8x8xf32>)}}
  %0 = glow.local_response_normalization %x {half_window_size = 2 : i64} : tensor<64x8x8xf32>
  func.return
}

// -----

func.func @local_response_normalization_3(%x: tensor<1x64x8x8xi8>) {
  // expected-error @+1 {{'glow.local_response_normalization' op input must have floating-point elements, got i8}}
  %0 = glow.local_response_normalization %x {half_window_size = 2 : i64} : tensor<1x64x8x8xi8>
  func.return
}

// -----

func.func @local_response_normalization_4(%x: tensor<1x64x8x8xf32>) {
  // expected-error @+1 {{'glow.local_response_normalization' op half_window_size must be >= 0}}
  %0 = glow.local_response_normalization %x {half_window_size = -1 : i64} : tensor<1x64x8x8xf32>
  func.return
}

// -----

func.func @local_response_normalization_5(%x: tensor<1x64x8x8xf32>) {
  // expected-error @+1 {{'glow.local_response_normalization' op requires attribute 'half_window_size'}}
  %0 = glow.local_response_normalization %x {alpha = 1.0e-04 : f32} : tensor<1x64x8x8xf32>
  func.return
}

// -----

func.func @soft_max_3(%x: tensor<8x10xi32>) {
  // expected-error @+1 {{'glow.soft_max' op input must have floating-point elements, got i32}}
  %0 = glow.soft_max %x : tensor<8x10xi32>
  func.return
}

// -----

func.func @log_soft_max_1(%x: tensor<8x10xf32>) {
  // expected-error @+1 {{'glow.log_soft_max' op axis 2 is out of range for rank 2}}
  %0 = glow.log_soft_max %x {axis = 2 : i64} : tensor<8x10xf32>
  func.return
}

// -----

func.func @log_soft_max_2(%x: tensor<8x10xf16>) {
  // expected-error @+1 {{'glow.log_soft_max' op attribute 'axis' must be an integer, got 1.000000e+00 : f32}}
  %0 = glow.log_soft_max %x {axis = 1.0 : f32} : tensor<8x10xf16>
  func.return
}

// -----

// ===== Resize, space_to_depth (nn.py)

func.func @resize_nearest_2(%x: tensor<1x3x8x8xf32>) {
  // expected-error @+1 {{'glow.resize_nearest' op result rank 3 must equal input rank 4}}
  %0 = glow.resize_nearest %x {scale = array<f32: 1.0, 1.0, 2.0, 2.0>} : tensor<1x3x8x8xf32> -> tensor<3x16x16xf32>
  func.return
}

// -----

func.func @resize_nearest_3(%x: tensor<1x3x8x8xf32>) {
  // expected-error @+1 {{'glow.resize_nearest' op input and result must have the same element type, got f32 and f16}}
  %0 = glow.resize_nearest %x {scale = array<f32: 1.0, 1.0, 2.0, 2.0>} : tensor<1x3x8x8xf32> -> tensor<1x3x16x16xf16>
  func.return
}

// -----

func.func @resize_nearest_4(%x: tensor<1x3x8x8xf32>) {
  // expected-error @+1 {{'glow.resize_nearest' op requires attribute 'scale'}}
  %0 = glow.resize_nearest %x : tensor<1x3x8x8xf32> -> tensor<1x3x16x16xf32>
  func.return
}

// -----

func.func @resize_nearest_5(%x: tensor<1x3x8x8xf32>) {
  // expected-error @+1 {{'glow.resize_nearest' op scale has 2 entries, expected one per dim (4)}}
  %0 = glow.resize_nearest %x {scale = array<f32: 2.0, 2.0>} : tensor<1x3x8x8xf32> -> tensor<1x3x16x16xf32>
  func.return
}

// -----

func.func @resize_nearest_6(%x: tensor<1x3x8x8xf32>) {
  // expected-error @+1 {{'glow.resize_nearest' op scale must be positive and finite, got [1.0, 1.0, 0.0, 2.0]}}
  %0 = glow.resize_nearest %x {scale = array<f32: 1.0, 1.0, 0.0, 2.0>} : tensor<1x3x8x8xf32> -> tensor<1x3x0x16xf32>
  func.return
}

// -----

func.func @resize_nearest_7(%x: tensor<1x3x8x8xf32>) {
  // expected-error @+1 {{'glow.resize_nearest' op result dim 3 is 20, but input 8 x scale 2.0 gives 16}}
  %0 = glow.resize_nearest %x {scale = array<f32: 1.0, 1.0, 2.0, 2.0>} : tensor<1x3x8x8xf32> -> tensor<1x3x16x20xf32>
  func.return
}

// -----

func.func @resize_nearest_8(%x: tensor<1x3x8x8xf32>) {
  // expected-error @+1 {{'glow.resize_nearest' op attribute 'nearest_mode' must be one of 'floor', 'round_prefer_floor', 'round_prefer_ceil', 'ceil', got 'nearest'}}
  %0 = glow.resize_nearest %x {scale = array<f32: 1.0, 1.0, 2.0, 2.0>, nearest_mode = "nearest"} : tensor<1x3x8x8xf32> -> tensor<1x3x16x16xf32>
  func.return
}

// -----

func.func @resize_bilinear_1(%x: tensor<1x3x8x8xf32>) {
  // expected-error @+1 {{'glow.resize_bilinear' op attribute 'coordinate_transformation_mode' must be one of 'asymmetric', 'half_pixel', 'align_corners', 'pytorch_half_pixel', 'tf_half_pixel_for_nn', got 'tf_crop_and_resize'}}
  %0 = glow.resize_bilinear %x {scale = array<f32: 1.0, 1.0, 2.0, 2.0>, coordinate_transformation_mode = "tf_crop_and_resize"} : tensor<1x3x8x8xf32> -> tensor<1x3x16x16xf32>
  func.return
}

// -----

func.func @resize_bilinear_2(%x: tensor<1x3x8x8xi32>) {
  // expected-error @+1 {{'glow.resize_bilinear' op input must have floating-point elements, got i32}}
  %0 = glow.resize_bilinear %x {scale = array<f32: 1.0, 1.0, 2.0, 2.0>} : tensor<1x3x8x8xi32> -> tensor<1x3x16x16xi32>
  func.return
}

// -----

func.func @space_to_depth_1(%x: tensor<3x8x8xf32>) {
  // expected-error @+1 {{'glow.space_to_depth' op input must have rank 4, got rank 3 (tensor<3x8x8xf32>)}}
  %0 = glow.space_to_depth %x {block_size = 2 : i64} : tensor<3x8x8xf32> -> tensor<12x4x4xf32>
  func.return
}

// -----

func.func @space_to_depth_2(%x: tensor<1x3x8x8xf32>) {
  // expected-error @+1 {{'glow.space_to_depth' op block_size must be positive, got 0}}
  %0 = glow.space_to_depth %x {block_size = 0 : i64} : tensor<1x3x8x8xf32> -> tensor<1x3x8x8xf32>
  func.return
}

// -----

func.func @space_to_depth_3(%x: tensor<1x3x8x8xf32>) {
  // expected-error @+1 {{'glow.space_to_depth' op block_size 3 must divide H 8 and W 8}}
  %0 = glow.space_to_depth %x {block_size = 3 : i64} : tensor<1x3x8x8xf32> -> tensor<1x27x2x2xf32>
  func.return
}

// -----

func.func @space_to_depth_4(%x: tensor<1x3x8x8xf32>) {
  // expected-error @+1 {{'glow.space_to_depth' op result shape is 1x3x16x4, expected 1x12x4x4}}
  %0 = glow.space_to_depth %x {block_size = 2 : i64} : tensor<1x3x8x8xf32> -> tensor<1x3x16x4xf32>
  func.return
}

// -----

func.func @space_to_depth_5(%x: tensor<1x3x8x8xf32>) {
  // expected-error @+1 {{'glow.space_to_depth' op input and result must have the same element type, got f32 and f16}}
  %0 = glow.space_to_depth %x {block_size = 2 : i64} : tensor<1x3x8x8xf32> -> tensor<1x12x4x4xf16>
  func.return
}

// -----

// ===== glow.constant, glow.splat (data.py)

func.func @constant_1() {
  // expected-error @+1 {{'glow.constant' op requires attribute 'value'}}
  %0 = "glow.constant"() : () -> tensor<2xf32>
  func.return
}

// -----

func.func @constant_2() {
  // expected-error @+1 {{'glow.constant' op value must be dense<...> or dense_resource<...>, got 1.000000e+00 : f32}}
  %0 = "glow.constant"() {value = 1.0 : f32} : () -> tensor<2xf32>
  func.return
}

// -----

func.func @constant_3() {
  // expected-error @+1 {{'glow.constant' op value type tensor<2xf32> must equal the result type tensor<3xf32>}}
  %0 = "glow.constant"() {value = dense<1.0> : tensor<2xf32>} : () -> tensor<3xf32>
  func.return
}

// -----

func.func @constant_4() {
  // expected-error @+1 {{'glow.constant' op has unknown attribute 'name' (its attributes: value)}}
  %0 = glow.constant dense<1.0> : tensor<2xf32> {name = "w"}
  func.return
}

// -----

// A weight whose blob is not in the file (printed by a printer that dropped the
// dialect_resources section): an error where it is used, naming the resource.
func.func @constant_no_blob() {
  // expected-error @+1 {{'glow.constant' op dense_resource<lost> has no data (no blob 'lost' in a {-# dialect_resources #-} section)}}
  %0 = glow.constant dense_resource<lost> : tensor<2xf32>
  func.return
}

// -----

// The blob of another handle does not count.
func.func @constant_other_blob() {
  // expected-error @+1 {{'glow.constant' op dense_resource<lost> has no data}}
  %0 = "glow.constant"() {value = dense_resource<lost> : tensor<2xf32>} : () -> tensor<2xf32>
  func.return
}

{-#
  dialect_resources: {
    builtin: {
      found: "0x040000000000803f00000040"
    }
  }
#-}

// -----

func.func @parse_6() {
  // expected-error @+1 {{glow.constant expects dense<...> or dense_resource<...>, got 1.000000e+00 : f32}}
  %0 = glow.constant 1.0 : f32
  func.return
}

// -----

func.func @parse_7() {
  // expected-error @+1 {{Shape mismatch in dense literal. Expected [2] shape from the type, but got [3] shape.}}
  %0 = glow.constant dense<[1.0, 2.0, 3.0]> : tensor<2xf32>
  func.return
}

// -----

func.func @splat_1() {
  // expected-error @+1 {{'glow.splat' op requires attribute 'value'}}
  %0 = glow.splat : tensor<2xf32>
  func.return
}

// -----

func.func @splat_2() {
  // expected-error @+1 {{'glow.splat' op attribute 'value' must be a float, got "one"}}
  %0 = glow.splat {value = "one"} : tensor<2xf32>
  func.return
}

// -----

// ===== glow.concat (data.py)

func.func @concat_2() {
  // expected-error @+1 {{'glow.concat' op needs at least one input}}
  %0 = glow.concat {dim = 0 : i64} : () -> tensor<2xf32>
  func.return
}

// -----

func.func @concat_3(%x: tensor<2x3xf32>) {
  // expected-error @+1 {{'glow.concat' op requires attribute 'dim'}}
  %0 = glow.concat %x, %x : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<4x3xf32>
  func.return
}

// -----

func.func @concat_4(%x: tensor<2x3xf32>) {
  // expected-error @+1 {{'glow.concat' op dim 2 is out of range for rank 2}}
  %0 = glow.concat %x, %x {dim = 2 : i64} : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<4x3xf32>
  func.return
}

// -----

func.func @concat_5(%x: tensor<f32>) {
  // expected-error @+1 {{'glow.concat' op dim 0 is out of range for rank 0}}
  %0 = glow.concat %x, %x {dim = 0 : i64} : (tensor<f32>, tensor<f32>) -> tensor<f32>
  func.return
}

// -----

func.func @concat_6(%x: tensor<2x3xf32>, %y: tensor<6xf32>) {
  // expected-error @+1 {{'glow.concat' op input #1 has rank 1, the result 2}}
  %0 = glow.concat %x, %y {dim = 0 : i64} : (tensor<2x3xf32>, tensor<6xf32>) -> tensor<4x3xf32>
  func.return
}

// -----

func.func @concat_7(%x: tensor<2x3xf32>, %y: tensor<2x4xf32>) {
  // expected-error @+1 {{'glow.concat' op input #1 shape 2x4 differs from the result 4x3 outside dim 0}}
  %0 = glow.concat %x, %y {dim = 0 : i64} : (tensor<2x3xf32>, tensor<2x4xf32>) -> tensor<4x3xf32>
  func.return
}

// -----

func.func @concat_8(%x: tensor<2x3xf32>, %y: tensor<2x3xf16>) {
  // expected-error @+1 {{'glow.concat' op input #1 and result must have the same element type, got f16 and f32}}
  %0 = glow.concat %x, %y {dim = 0 : i64} : (tensor<2x3xf32>, tensor<2x3xf16>) -> tensor<4x3xf32>
  func.return
}

// -----

func.func @concat_9(%x: tensor<2x3xf32>, %y: tensor<2x3xf32>) {
  // expected-error @+1 {{'glow.concat' op inputs add up to 4 along dim 0, result has 5}}
  %0 = glow.concat %x, %y {dim = -2 : i64} : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<5x3xf32>
  func.return
}

// -----

// ===== glow.slice, glow.insert_tensor (data.py)

func.func @slice_1(%x: tensor<4x4xf32>) {
  // expected-error @+1 {{'glow.slice' op start (1 entries), input (rank 2) and result (rank 2) must agree in rank}}
  %0 = glow.slice %x {start = array<i64: 0>} : tensor<4x4xf32> -> tensor<2x2xf32>
  func.return
}

// -----

func.func @slice_2(%x: tensor<4x4xf32>) {
  // expected-error @+1 {{'glow.slice' op slice [3, 5) of dim 1 is outside the input's 4}}
  %0 = glow.slice %x {start = array<i64: 0, 3>} : tensor<4x4xf32> -> tensor<2x2xf32>
  func.return
}

// -----

func.func @slice_3(%x: tensor<4x4xf32>) {
  // expected-error @+1 {{'glow.slice' op slice [-1, 1) of dim 0 is outside the input's 4}}
  %0 = glow.slice %x {start = array<i64: -1, 0>} : tensor<4x4xf32> -> tensor<2x2xf32>
  func.return
}

// -----

func.func @slice_4(%x: tensor<4x4xf32>) {
  // expected-error @+1 {{'glow.slice' op input and result must have the same element type, got f32 and i32}}
  %0 = glow.slice %x {start = array<i64: 0, 0>} : tensor<4x4xf32> -> tensor<2x2xi32>
  func.return
}

// -----

func.func @slice_5(%x: tensor<4x4xf32>) {
  // expected-error @+1 {{'glow.slice' op requires attribute 'start'}}
  %0 = glow.slice %x : tensor<4x4xf32> -> tensor<2x2xf32>
  func.return
}

// -----

func.func @insert_tensor_1(%big: tensor<8x8xf32>, %small: tensor<2x2xf32>) {
  // expected-error @+1 {{'glow.insert_tensor' op start, big and small must agree in rank (3, 2, 2)}}
  %0 = glow.insert_tensor %big, %small {start = array<i64: 0, 0, 0>} : (tensor<8x8xf32>, tensor<2x2xf32>) -> tensor<8x8xf32>
  func.return
}

// -----

func.func @insert_tensor_2(%big: tensor<8x8xf32>, %small: tensor<2x2xf32>) {
  // expected-error @+1 {{'glow.insert_tensor' op count must be >= 1, got 0}}
  %0 = glow.insert_tensor %big, %small {start = array<i64: 0, 0>, count = 0 : i64} : (tensor<8x8xf32>, tensor<2x2xf32>) -> tensor<8x8xf32>
  func.return
}

// -----

func.func @insert_tensor_3(%big: tensor<8x8xf32>, %small: tensor<2x2xf32>) {
  // expected-error @+1 {{'glow.insert_tensor' op insertion [4, 10) of dim 1 is outside big's 8}}
  %0 = glow.insert_tensor %big, %small {start = array<i64: 0, 4>, count = 3 : i64, axis = 1 : i64} : (tensor<8x8xf32>, tensor<2x2xf32>) -> tensor<8x8xf32>
  func.return
}

// -----

func.func @insert_tensor_4(%big: tensor<8x8xf32>, %small: tensor<2x2xf32>) {
  // expected-error @+1 {{'glow.insert_tensor' op axis 2 is out of range for rank 2}}
  %0 = glow.insert_tensor %big, %small {start = array<i64: 0, 0>, axis = 2 : i64} : (tensor<8x8xf32>, tensor<2x2xf32>) -> tensor<8x8xf32>
  func.return
}

// -----

func.func @insert_tensor_5(%big: tensor<8x8xf32>, %small: tensor<2x2xf32>) {
  // expected-error @+1 {{'glow.insert_tensor' op result type tensor<8x9xf32> must equal big's type tensor<8x8xf32>}}
  %0 = glow.insert_tensor %big, %small {start = array<i64: 0, 0>} : (tensor<8x8xf32>, tensor<2x2xf32>) -> tensor<8x9xf32>
  func.return
}

// -----

func.func @insert_tensor_6(%big: tensor<8x8xf32>, %small: tensor<2x2xf16>) {
  // expected-error @+1 {{'glow.insert_tensor' op big and small must have the same element type, got f32 and f16}}
  %0 = glow.insert_tensor %big, %small {start = array<i64: 0, 0>} : (tensor<8x8xf32>, tensor<2x2xf16>) -> tensor<8x8xf32>
  func.return
}

// -----

// ===== glow.reshape, glow.transpose, glow.broadcast, glow.tile (data.py)

func.func @reshape_1(%x: tensor<2x3x4xf32>) {
  // expected-error @+1 {{'glow.reshape' op cannot reshape 2x3x4 (24 elements) to 5x5 (25 elements)}}
  %0 = glow.reshape %x : tensor<2x3x4xf32> -> tensor<5x5xf32>
  func.return
}

// -----

func.func @reshape_2(%x: tensor<2x3x4xf32>) {
  // expected-error @+1 {{'glow.reshape' op input and result must have the same element type, got f32 and i32}}
  %0 = glow.reshape %x : tensor<2x3x4xf32> -> tensor<24xi32>
  func.return
}

// -----

func.func @transpose_3(%x: tensor<2x3x4xf32>) {
  // expected-error @+1 {{'glow.transpose' op shuffle [0, 0, 1] is not a permutation of 0..2}}
  %0 = glow.transpose %x {shuffle = array<i64: 0, 0, 1>} : tensor<2x3x4xf32> -> tensor<2x2x3xf32>
  func.return
}

// -----

func.func @transpose_4(%x: tensor<2x3x4xf32>) {
  // expected-error @+1 {{'glow.transpose' op result shape is 4x3x2, expected 4x2x3 (input 2x3x4 shuffled by [2, 0, 1])}}
  %0 = glow.transpose %x {shuffle = array<i64: 2, 0, 1>} : tensor<2x3x4xf32> -> tensor<4x3x2xf32>
  func.return
}

// -----

func.func @transpose_5(%x: tensor<2x3x4xf32>) {
  // expected-error @+1 {{'glow.transpose' op input and result must have the same element type, got f32 and f16}}
  %0 = glow.transpose %x {shuffle = array<i64: 2, 0, 1>} : tensor<2x3x4xf32> -> tensor<4x2x3xf16>
  func.return
}

// -----

func.func @transpose_6(%x: tensor<2x3x4xf32>) {
  // expected-error @+1 {{'glow.transpose' op requires attribute 'shuffle'}}
  %0 = glow.transpose %x : tensor<2x3x4xf32> -> tensor<4x2x3xf32>
  func.return
}

// -----

func.func @broadcast_1(%x: tensor<4x3xf32>) {
  // expected-error @+1 {{'glow.broadcast' op cannot broadcast 4x3 to 2x4x5 at axis 1}}
  %0 = glow.broadcast %x {axis = 1 : i64} : tensor<4x3xf32> -> tensor<2x4x5xf32>
  func.return
}

// -----

func.func @broadcast_2(%x: tensor<2x4x3xf32>) {
  // expected-error @+1 {{'glow.broadcast' op cannot broadcast 2x4x3 to 4x3 at axis -1}}
  %0 = glow.broadcast %x : tensor<2x4x3xf32> -> tensor<4x3xf32>
  func.return
}

// -----

func.func @broadcast_3(%x: tensor<1x3xf32>) {
  // expected-error @+1 {{'glow.broadcast' op input and result must have the same element type, got f32 and f16}}
  %0 = glow.broadcast %x : tensor<1x3xf32> -> tensor<4x3xf16>
  func.return
}

// -----

func.func @tile_1(%x: tensor<2x3xf32>) {
  // expected-error @+1 {{'glow.tile' op axis 2 is out of range for rank 2}}
  %0 = glow.tile %x {count = 2 : i64, axis = 2 : i64} : tensor<2x3xf32> -> tensor<2x6xf32>
  func.return
}

// -----

func.func @tile_2(%x: tensor<f32>) {
  // expected-error @+1 {{'glow.tile' op axis 0 is out of range for rank 0}}
  %0 = glow.tile %x {count = 2 : i64, axis = 0 : i64} : tensor<f32> -> tensor<2xf32>
  func.return
}

// -----

func.func @tile_3(%x: tensor<2x3xf32>) {
  // expected-error @+1 {{'glow.tile' op count must be >= 1, got 0}}
  %0 = glow.tile %x {count = 0 : i64, axis = 1 : i64} : tensor<2x3xf32> -> tensor<2x0xf32>
  func.return
}

// -----

func.func @tile_4(%x: tensor<2x3xf32>) {
  // expected-error @+1 {{'glow.tile' op result shape is 4x3, expected 2x6}}
  %0 = glow.tile %x {count = 2 : i64, axis = 1 : i64} : tensor<2x3xf32> -> tensor<4x3xf32>
  func.return
}

// -----

func.func @tile_5(%x: tensor<2x3xf32>) {
  // expected-error @+1 {{'glow.tile' op requires attribute 'count'}}
  %0 = glow.tile %x {axis = 1 : i64} : tensor<2x3xf32> -> tensor<2x6xf32>
  func.return
}

// -----

func.func @tile_6(%x: tensor<2x3xf32>) {
  // expected-error @+1 {{'glow.tile' op input and result must have the same element type, got f32 and i8}}
  %0 = glow.tile %x {count = 2 : i64, axis = 1 : i64} : tensor<2x3xf32> -> tensor<2x6xi8>
  func.return
}

// -----

// ===== glow.pad, glow.gather (data.py)

func.func @pad_1(%x: tensor<2x3xf32>) {
  // expected-error @+1 {{'glow.pad' op pads has 2 entries, expected 4 (2 x rank)}}
  %0 = glow.pad %x {pads = array<i64: 1, 1>} : tensor<2x3xf32> -> tensor<3x4xf32>
  func.return
}

// -----

func.func @pad_2(%x: tensor<2x3xf32>) {
  // expected-error @+1 {{'glow.pad' op pads must be non-negative, got [0, -1, 0, 1]}}
  %0 = glow.pad %x {pads = array<i64: 0, -1, 0, 1>} : tensor<2x3xf32> -> tensor<2x3xf32>
  func.return
}

// -----

func.func @pad_3(%x: tensor<2x3xf32>) {
  // expected-error @+1 {{'glow.pad' op attribute 'mode' must be one of 'constant', 'reflect', 'edge', got 'wrap'}}
  %0 = glow.pad %x {pads = array<i64: 0, 1, 0, 1>, mode = "wrap"} : tensor<2x3xf32> -> tensor<2x5xf32>
  func.return
}

// -----

func.func @pad_4(%x: tensor<2x3xf32>) {
  // expected-error @+1 {{'glow.pad' op reflect padding of dim 1 must be smaller than its size 3}}
  %0 = glow.pad %x {pads = array<i64: 0, 3, 0, 0>, mode = "reflect"} : tensor<2x3xf32> -> tensor<2x6xf32>
  func.return
}

// -----

func.func @pad_5(%x: tensor<2x3xf32>) {
  // expected-error @+1 {{'glow.pad' op result shape is 2x4, expected 2x5}}
  %0 = glow.pad %x {pads = array<i64: 0, 1, 0, 1>} : tensor<2x3xf32> -> tensor<2x4xf32>
  func.return
}

// -----

func.func @pad_6(%x: tensor<2x3xf32>) {
  // expected-error @+1 {{'glow.pad' op input and result must have the same element type, got f32 and f16}}
  %0 = glow.pad %x {pads = array<i64: 0, 1, 0, 1>} : tensor<2x3xf32> -> tensor<2x5xf16>
  func.return
}

// -----

func.func @pad_7(%x: tensor<2x3xf32>) {
  // expected-error @+1 {{'glow.pad' op attribute 'value' must be a float, got "zero"}}
  %0 = glow.pad %x {pads = array<i64: 0, 1, 0, 1>, value = "zero"} : tensor<2x3xf32> -> tensor<2x5xf32>
  func.return
}

// -----

func.func @gather_1(%x: tensor<f32>, %i: tensor<2xi64>) {
  // expected-error @+1 {{'glow.gather' op data must have rank >= 1}}
  %0 = glow.gather %x, %i : (tensor<f32>, tensor<2xi64>) -> tensor<2xf32>
  func.return
}

// -----

func.func @gather_2(%x: tensor<6x4xf32>, %i: tensor<2xi64>) {
  // expected-error @+1 {{'glow.gather' op axis 2 is out of range for rank 2}}
  %0 = glow.gather %x, %i {axis = 2 : i64} : (tensor<6x4xf32>, tensor<2xi64>) -> tensor<2x4xf32>
  func.return
}

// -----

func.func @gather_3(%x: tensor<6x4xf32>, %i: tensor<2xf32>) {
  // expected-error @+1 {{'glow.gather' op indices must have i32 or i64 elements, got f32}}
  %0 = glow.gather %x, %i : (tensor<6x4xf32>, tensor<2xf32>) -> tensor<2x4xf32>
  func.return
}

// -----

func.func @gather_4(%x: tensor<6x4xf32>, %i: tensor<2x3xi32>) {
  // expected-error @+1 {{'glow.gather' op result shape is 2x3x4, expected 6x2x3}}
  %0 = glow.gather %x, %i {axis = 1 : i64} : (tensor<6x4xf32>, tensor<2x3xi32>) -> tensor<2x3x4xf32>
  func.return
}

// -----

func.func @gather_5(%x: tensor<6x4xf32>, %i: tensor<2xi32>) {
  // expected-error @+1 {{'glow.gather' op data and result must have the same element type, got f32 and i32}}
  %0 = glow.gather %x, %i : (tensor<6x4xf32>, tensor<2xi32>) -> tensor<2x4xi32>
  func.return
}

// -----

func.func @scatter_data_1(%x: tensor<6x4xf32>, %i: tensor<2x1xi64>, %u: tensor<2x4xf32>) {
  // expected-error @+1 {{'glow.scatter_data' op indices must have rank 1}}
  %0 = glow.scatter_data %x, %i, %u : (tensor<6x4xf32>, tensor<2x1xi64>, tensor<2x4xf32>) -> tensor<6x4xf32>
  func.return
}

// -----

func.func @scatter_data_2(%x: tensor<6x4xf32>, %i: tensor<2xi64>, %u: tensor<3x4xf32>) {
  // expected-error @+1 {{'glow.scatter_data' op updates shape is 3x4, expected 2x4 (one row of data per index)}}
  %0 = glow.scatter_data %x, %i, %u : (tensor<6x4xf32>, tensor<2xi64>, tensor<3x4xf32>) -> tensor<6x4xf32>
  func.return
}

// -----

func.func @scatter_data_3(%x: tensor<6x4xf32>, %i: tensor<2xi64>, %u: tensor<2x4xf32>) {
  // expected-error @+1 {{'glow.scatter_data' op attribute 'reduction' must be one of}}
  %0 = glow.scatter_data %x, %i, %u {reduction = "sub"} : (tensor<6x4xf32>, tensor<2xi64>, tensor<2x4xf32>) -> tensor<6x4xf32>
  func.return
}

// -----

func.func @scatter_data_4(%x: tensor<6x4xf32>, %i: tensor<2xi64>, %u: tensor<2x4xf16>) {
  // expected-error @+1 {{'glow.scatter_data' op data and updates must have the same element type}}
  %0 = glow.scatter_data %x, %i, %u : (tensor<6x4xf32>, tensor<2xi64>, tensor<2x4xf16>) -> tensor<6x4xf32>
  func.return
}

// -----

// ===== Reductions, arg_max/arg_min, top_k (data.py)

func.func @batched_reduce_add_1(%x: tensor<8x16xf32>) {
  // expected-error @+1 {{'glow.batched_reduce_add' op axes must name at least one axis}}
  %0 = glow.batched_reduce_add %x {axes = array<i64>} : tensor<8x16xf32> -> tensor<8x16xf32>
  func.return
}

// -----

func.func @batched_reduce_add_2(%x: tensor<8x16xf32>) {
  // expected-error @+1 {{'glow.batched_reduce_add' op requires attribute 'axes'}}
  %0 = glow.batched_reduce_add %x : tensor<8x16xf32> -> tensor<16xf32>
  func.return
}

// -----

func.func @batched_reduce_max_1(%x: tensor<8x16xf32>) {
  // expected-error @+1 {{'glow.batched_reduce_max' op axis 2 is out of range for rank 2}}
  %0 = glow.batched_reduce_max %x {axes = array<i64: 2>} : tensor<8x16xf32> -> tensor<8xf32>
  func.return
}

// -----

func.func @batched_reduce_min_1(%x: tensor<8x16xf32>) {
  // expected-error @+1 {{'glow.batched_reduce_min' op axes [0, -2] repeat an axis}}
  %0 = glow.batched_reduce_min %x {axes = array<i64: 0, -2>} : tensor<8x16xf32> -> tensor<16xf32>
  func.return
}

// -----

func.func @batched_reduce_prod_1(%x: tensor<8x16xf32>) {
  // expected-error @+1 {{'glow.batched_reduce_prod' op result shape is 8, expected 16 (input 8x16 with axes [0] removed)}}
  %0 = glow.batched_reduce_prod %x {axes = array<i64: 0>} : tensor<8x16xf32> -> tensor<8xf32>
  func.return
}

// -----

func.func @batched_reduce_add_3(%x: tensor<8x16xi1>) {
  // expected-error @+1 {{'glow.batched_reduce_add' op input must have numeric elements, got i1}}
  %0 = glow.batched_reduce_add %x {axes = array<i64: 0>} : tensor<8x16xi1> -> tensor<16xi1>
  func.return
}

// -----

func.func @batched_reduce_add_4(%x: tensor<8x16xf32>) {
  // expected-error @+1 {{'glow.batched_reduce_add' op input and result must have the same element type, got f32 and f64}}
  %0 = glow.batched_reduce_add %x {axes = array<i64: 0>} : tensor<8x16xf32> -> tensor<16xf64>
  func.return
}

// -----

func.func @batched_reduce_mean_1(%x: tensor<8x16xi32>) {
  // expected-error @+1 {{'glow.batched_reduce_mean' op input must have floating-point elements, got i32}}
  %0 = glow.batched_reduce_mean %x {axes = array<i64: 1>} : tensor<8x16xi32> -> tensor<8xi32>
  func.return
}

// -----

func.func @arg_max_3(%x: tensor<8x16xf32>) {
  // expected-error @+1 {{'glow.arg_max' op axis 2 is out of range for rank 2}}
  %0 = glow.arg_max %x {axis = 2 : i64} : tensor<8x16xf32> -> tensor<8x1xi64>
  func.return
}

// -----

func.func @arg_max_4(%x: tensor<f32>) {
  // expected-error @+1 {{'glow.arg_max' op axis 0 is out of range for rank 0}}
  %0 = glow.arg_max %x : tensor<f32> -> tensor<i64>
  func.return
}

// -----

func.func @arg_max_5(%x: tensor<8x16xf32>) {
  // expected-error @+1 {{'glow.arg_max' op result shape is 8, expected 8x1}}
  %0 = glow.arg_max %x {axis = 1 : i64} : tensor<8x16xf32> -> tensor<8xi64>
  func.return
}

// -----

func.func @arg_min_1(%x: tensor<8x16xf32>) {
  // expected-error @+1 {{'glow.arg_min' op result shape is 8x1, expected 8}}
  %0 = glow.arg_min %x {axis = 1 : i64, keep_dims = false} : tensor<8x16xf32> -> tensor<8x1xi64>
  func.return
}

// -----

func.func @arg_min_2(%x: tensor<8x16xf32>) {
  // expected-error @+1 {{'glow.arg_min' op result must have i32 or i64 elements, got f32}}
  %0 = glow.arg_min %x {axis = 1 : i64, keep_dims = false} : tensor<8x16xf32> -> tensor<8xf32>
  func.return
}

// -----

func.func @top_k_1(%x: tensor<f32>) {
  // expected-error @+1 {{'glow.top_k' op input must have rank >= 1}}
  %v, %i = glow.top_k %x {k = 1 : i64} : (tensor<f32>) -> (tensor<1xf32>, tensor<1xi64>)
  func.return
}

// -----

func.func @top_k_2(%x: tensor<8x32xf32>) {
  // expected-error @+1 {{'glow.top_k' op requires attribute 'k'}}
  %v, %i = glow.top_k %x : (tensor<8x32xf32>) -> (tensor<8x5xf32>, tensor<8x5xi64>)
  func.return
}

// -----

func.func @top_k_3(%x: tensor<8x32xf32>) {
  // expected-error @+1 {{'glow.top_k' op k 40 must be in [1, 32] (the last dim)}}
  %v, %i = glow.top_k %x {k = 40 : i64} : (tensor<8x32xf32>) -> (tensor<8x5xf32>, tensor<8x5xi64>)
  func.return
}

// -----

func.func @top_k_4(%x: tensor<8x32xf32>) {
  // expected-error @+1 {{'glow.top_k' op k 0 must be in [1, 32] (the last dim)}}
  %v, %i = glow.top_k %x {k = 0 : i64} : (tensor<8x32xf32>) -> (tensor<8x5xf32>, tensor<8x5xi64>)
  func.return
}

// -----

func.func @top_k_5(%x: tensor<8x32xf32>) {
  // expected-error @+1 {{'glow.top_k' op values shape is 8x4, expected 8x5}}
  %v, %i = glow.top_k %x {k = 5 : i64} : (tensor<8x32xf32>) -> (tensor<8x4xf32>, tensor<8x5xi64>)
  func.return
}

// -----

func.func @top_k_6(%x: tensor<8x32xf32>) {
  // expected-error @+1 {{'glow.top_k' op indices shape is 5, expected 8x5}}
  %v, %i = glow.top_k %x {k = 5 : i64} : (tensor<8x32xf32>) -> (tensor<8x5xf32>, tensor<5xi64>)
  func.return
}

// -----

func.func @top_k_7(%x: tensor<8x32xf32>) {
  // expected-error @+1 {{'glow.top_k' op input and values must have the same element type, got f32 and f16}}
  %v, %i = glow.top_k %x {k = 5 : i64} : (tensor<8x32xf32>) -> (tensor<8x5xf16>, tensor<8x5xi64>)
  func.return
}

// -----

func.func @top_k_8(%x: tensor<8x32xf32>) {
  // expected-error @+1 {{'glow.top_k' op indices must have i32 or i64 elements, got i16}}
  %v, %i = glow.top_k %x {k = 5 : i64} : (tensor<8x32xf32>) -> (tensor<8x5xf32>, tensor<8x5xi16>)
  func.return
}

// -----

func.func @top_k_9(%x: tensor<8x32xf32>) {
  // expected-error @+1 {{'glow.top_k' op Expected 2 results, but got 1}}
  %v = "glow.top_k"(%x) {k = 5 : i64} : (tensor<8x32xf32>) -> tensor<8x5xf32>
  func.return
}

// -----

// ===== Parse errors

func.func @parse_8(%x: tensor<4xf32>) {
  // expected-error @+1 {{unknown op 'glow.frobnicate'}}
  %0 = glow.frobnicate %x : tensor<4xf32>
  func.return
}

// -----

func.func @parse_9(%x: tensor<4xf32>) {
  // expected-error @+1 {{Expected ','}}
  %0 = glow.add %x : tensor<4xf32>
  func.return
}

// -----

func.func @add_2(%x: tensor<4xf32>) {
  // expected-error @+1 {{'glow.add' op Expected 2 operands, but got 1}}
  %0 = "glow.add"(%x) : (tensor<4xf32>) -> tensor<4xf32>
  func.return
}

// -----

func.func @parse_10(%x: tensor<4xf32>) {
  // expected-error @+1 {{operand is used with type tensor<5xf32>, but has been previously used or defined with type tensor<4xf32>}}
  %0 = glow.relu %x : tensor<5xf32>
  func.return
}

// -----

func.func @parse_11(%x: tensor<4xf32>) {
  // expected-error @+1 {{use of undefined value '%y'}}
  %0 = glow.relu %y : tensor<4xf32>
  func.return
}

// -----

func.func @relu_5(%x: tensor<*xf32>) {
  // expected-error @+1 {{'glow.relu' op tensor<*xf32> should be of base attribute tensor}}
  %0 = glow.relu %x : tensor<*xf32>
  func.return
}

// -----

func.func @relu_6(%x: tensor<4xf32>) {
  // expected-error @+1 {{'glow.relu' op property 'alpha' is not defined by the operation 'glow.relu'}}
  %0 = "glow.relu"(%x) <{alpha = 1.0 : f32}> : (tensor<4xf32>) -> tensor<4xf32>
  func.return
}

// -----

// expected-error @+1 {{'glow.qaunt' is not registered}}
func.func @parse_12(%x: tensor<4x!glow.qaunt<i8, scale = 0.5, offset = 0>>) {
  func.return
}

// -----

func.func @parse_13(%x: tensor<4xf32>) {
  // expected-error @+1 {{Expected ':'}}
  %0 = glow.relu %x tensor<4xf32>
  func.return
}


// ===== Dominance (ir/text.py check_dominance): a value used before its definition

// -----

func.func @used_before_defined(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'glow.tanh' op operand #0 does not dominate this use (defined later, at}}
  %1 = glow.tanh %0 : tensor<4xf32>
  %0 = glow.relu %x : tensor<4xf32>
  func.return %1 : tensor<4xf32>
}

// -----

func.func @returned_before_defined(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = glow.relu %x : tensor<4xf32>
  // expected-error @+1 {{'func.return' op operand #0 does not dominate this use}}
  func.return %1 : tensor<4xf32>
  %1 = glow.tanh %0 : tensor<4xf32>
}

// -----

func.func @own_result(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'glow.add' op operand #1 does not dominate this use (defined by this op)}}
  %0 = glow.add %x, %0 : tensor<4xf32>
  func.return %0 : tensor<4xf32>
}

// -----


// ===== Control flow (control_flow.py)

func.func @if_cond_shape(%c: tensor<2xi1>, %x: tensor<4xf32>) {
  // expected-error @+1 {{'glow.if' op condition must be a one-element tensor of i1, got tensor<2xi1>}}
  %r = glow.if %c : tensor<2xi1> -> (tensor<4xf32>) {
    glow.yield %x : tensor<4xf32>
  } else {
    glow.yield %x : tensor<4xf32>
  }
  func.return
}

// -----

func.func @if_cond_type(%c: tensor<f32>, %x: tensor<4xf32>) {
  // expected-error @+1 {{'glow.if' op condition must be a one-element tensor of i1, got tensor<f32>}}
  %r = glow.if %c : tensor<f32> -> (tensor<4xf32>) {
    glow.yield %x : tensor<4xf32>
  } else {
    glow.yield %x : tensor<4xf32>
  }
  func.return
}

// -----

func.func @if_branch_types(%c: tensor<i1>, %x: tensor<4xf32>, %y: tensor<3xf32>) {
  // expected-error @+1 {{'glow.if' op the else branch yields (tensor<3xf32>); the results are (tensor<4xf32>)}}
  %r = glow.if %c : tensor<i1> -> (tensor<4xf32>) {
    glow.yield %x : tensor<4xf32>
  } else {
    glow.yield %y : tensor<3xf32>
  }
  func.return
}

// -----

func.func @if_branch_count(%c: tensor<i1>, %x: tensor<4xf32>) {
  // expected-error @+1 {{'glow.if' op the then branch yields (nothing); the results are (tensor<4xf32>)}}
  %r = glow.if %c : tensor<i1> -> (tensor<4xf32>) {
    glow.yield
  } else {
    glow.yield %x : tensor<4xf32>
  }
  func.return
}

// -----

func.func @if_no_yield(%c: tensor<i1>, %x: tensor<4xf32>) {
  %r = glow.if %c : tensor<i1> -> (tensor<4xf32>) {
    // expected-error @+1 {{'glow.relu' op Operation glow.relu terminates block in single-block region but is not a terminator}}
    %a = glow.relu %x : tensor<4xf32>
  } else {
    glow.yield %x : tensor<4xf32>
  }
  func.return
}

// -----

func.func @if_dynamic(%c: tensor<i1>, %x: tensor<?xf32>) {
  // expected-error @+1 {{'glow.if' op result 0 must have a static shape, got tensor<?xf32>}}
  %r = glow.if %c : tensor<i1> -> (tensor<?xf32>) {
    glow.yield %x : tensor<?xf32>
  } else {
    glow.yield %x : tensor<?xf32>
  }
  func.return
}

// -----

func.func @yield_outside(%x: tensor<4xf32>) {
  // expected-error @+1 {{'glow.yield' expects parent op to be one of 'glow.if', 'glow.loop'}}
  glow.yield %x : tensor<4xf32>
}

// -----

func.func @loop_trips(%m: tensor<i32>, %c: tensor<i1>, %x: tensor<4xf32>) {
  // expected-error @+1 {{'glow.loop' op the trip count must be a one-element tensor of i64, got tensor<i32>}}
  %r = glow.loop %m, %c, %x : tensor<i32>, tensor<i1>, tensor<4xf32> -> (tensor<4xf32>) {
  ^bb0(%i: tensor<i64>, %v: tensor<4xf32>):
    glow.yield %c, %v : tensor<i1>, tensor<4xf32>
  }
  func.return
}

// -----

func.func @loop_cond(%m: tensor<i64>, %c: tensor<2xi1>, %x: tensor<4xf32>) {
  // expected-error @+1 {{'glow.loop' op the condition must be a one-element tensor of i1, got tensor<2xi1>}}
  %r = glow.loop %m, %c, %x : tensor<i64>, tensor<2xi1>, tensor<4xf32> -> (tensor<4xf32>) {
  ^bb0(%i: tensor<i64>, %v: tensor<4xf32>):
    glow.yield %c, %v : tensor<2xi1>, tensor<4xf32>
  }
  func.return
}

// -----

func.func @loop_args(%m: tensor<i64>, %c: tensor<i1>, %x: tensor<4xf32>) {
  // expected-error @+1 {{'glow.loop' op the body takes the iteration number (tensor<i64>) and the carried values (tensor<4xf32>), got (tensor<4xf32>)}}
  %r = glow.loop %m, %c, %x : tensor<i64>, tensor<i1>, tensor<4xf32> -> (tensor<4xf32>) {
  ^bb0(%v: tensor<4xf32>):
    glow.yield %c, %v : tensor<i1>, tensor<4xf32>
  }
  func.return
}

// -----

func.func @loop_yield(%m: tensor<i64>, %c: tensor<i1>, %x: tensor<4xf32>, %y: tensor<3xf32>) {
  // expected-error @+1 {{'glow.loop' op the body yields (tensor<i1>, tensor<3xf32>); it must yield a one-element i1 condition, then the carried values (tensor<4xf32>)}}
  %r = glow.loop %m, %c, %x : tensor<i64>, tensor<i1>, tensor<4xf32> -> (tensor<4xf32>) {
  ^bb0(%i: tensor<i64>, %v: tensor<4xf32>):
    glow.yield %c, %y : tensor<i1>, tensor<3xf32>
  }
  func.return
}

// -----

func.func @loop_results(%m: tensor<i64>, %c: tensor<i1>, %x: tensor<4xf32>) {
  // expected-error @+1 {{'glow.loop' op results (tensor<3xf32>) must have the types of the carried values (tensor<4xf32>)}}
  %r = "glow.loop"(%m, %c, %x) ({
  ^bb0(%i: tensor<i64>, %v: tensor<4xf32>):
    glow.yield %c, %v : tensor<i1>, tensor<4xf32>
  }) : (tensor<i64>, tensor<i1>, tensor<4xf32>) -> tensor<3xf32>
  func.return
}

// -----

func.func @loop_dynamic(%m: tensor<i64>, %c: tensor<i1>, %x: tensor<?xf32>) {
  // expected-error @+1 {{'glow.loop' op carried values must have static shapes, got tensor<?xf32>}}
  %r = glow.loop %m, %c, %x : tensor<i64>, tensor<i1>, tensor<?xf32> -> (tensor<?xf32>) {
  ^bb0(%i: tensor<i64>, %v: tensor<?xf32>):
    glow.yield %c, %v : tensor<i1>, tensor<?xf32>
  }
  func.return
}

// -----

func.func @loop_operands(%m: tensor<i64>) {
  // expected-error @+1 {{expected the trip count, the condition, then the carried values}}
  %r = glow.loop %m : tensor<i64> -> () {
  ^bb0(%i: tensor<i64>):
  }
  func.return
}

// -----

func.func @loop_types(%m: tensor<i64>, %c: tensor<i1>) {
  // expected-error @+1 {{expected 2 operand types, got 1}}
  %r = glow.loop %m, %c : tensor<i64> -> () {
  ^bb0(%i: tensor<i64>):
  }
  func.return
}

// -----

// ===== max_pool_grad (nn.py)

func.func @max_pool_grad_1(%x: tensor<1x3x8x8xf32>, %g: tensor<1x3x3x3xf32>) {
  // expected-error @+1 {{'glow.max_pool_grad' op grad shape is 1x3x3x3, expected 1x3x4x4 (the max_pool result's shape)}}
  %0 = glow.max_pool_grad %x, %g {kernels = array<i64: 2, 2>, strides = array<i64: 2, 2>} : (tensor<1x3x8x8xf32>, tensor<1x3x3x3xf32>) -> tensor<1x3x8x8xf32>
  func.return
}

// -----

func.func @max_pool_grad_2(%x: tensor<1x3x8x8xf32>, %g: tensor<1x3x4x4xf32>) {
  // expected-error @+1 {{'glow.max_pool_grad' op result type tensor<1x3x4x4xf32> must equal the input type tensor<1x3x8x8xf32>}}
  %0 = glow.max_pool_grad %x, %g {kernels = array<i64: 2, 2>, strides = array<i64: 2, 2>} : (tensor<1x3x8x8xf32>, tensor<1x3x4x4xf32>) -> tensor<1x3x4x4xf32>
  func.return
}

// -----

func.func @max_pool_grad_3(%x: tensor<1x3x8x8xi32>, %g: tensor<1x3x4x4xi32>) {
  // expected-error @+1 {{'glow.max_pool_grad' op input must have floating-point elements, got i32}}
  %0 = glow.max_pool_grad %x, %g {kernels = array<i64: 2, 2>, strides = array<i64: 2, 2>} : (tensor<1x3x8x8xi32>, tensor<1x3x4x4xi32>) -> tensor<1x3x8x8xi32>
  func.return
}

// -----

// ===== Per-channel quantized dense ops (quantized_nn.py)

func.func @channelwise_conv_1(%x: tensor<1x3x8x8x!glow.quant<i8, scale = 0.5, offset = 0>>, %w: tensor<4x3x3x3x!glow.quant<i8, scale = 0.5, offset = 0>>, %b: tensor<4xi32>, %s: tensor<4xf32>, %o: tensor<4xi32>) {
  // expected-error @+1 {{'glow.channelwise_quantized_convolution' op filter must have i8 (the per-channel scales are operands) elements, got !glow.quant<i8, scale = 0.5, offset = 0>}}
  %0 = glow.channelwise_quantized_convolution %x, %w, %b, %s, %o {kernels = array<i64: 3, 3>} : (tensor<1x3x8x8x!glow.quant<i8, scale = 0.5, offset = 0>>, tensor<4x3x3x3x!glow.quant<i8, scale = 0.5, offset = 0>>, tensor<4xi32>, tensor<4xf32>, tensor<4xi32>) -> tensor<1x4x6x6x!glow.quant<i8, scale = 0.5, offset = 0>>
  func.return
}

// -----

func.func @channelwise_conv_2(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xi8>, %b: tensor<4xi32>, %s: tensor<4xf32>, %o: tensor<4xi32>) {
  // expected-error @+1 {{'glow.channelwise_quantized_convolution' op input must have quantized (!glow.quant) elements, got f32}}
  %0 = glow.channelwise_quantized_convolution %x, %w, %b, %s, %o {kernels = array<i64: 3, 3>} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xi8>, tensor<4xi32>, tensor<4xf32>, tensor<4xi32>) -> tensor<1x4x6x6x!glow.quant<i8, scale = 0.5, offset = 0>>
  func.return
}

// -----

func.func @channelwise_conv_3(%x: tensor<1x3x8x8x!glow.quant<i8, scale = 0.5, offset = 0>>, %w: tensor<4x3x3x3xi8>, %b: tensor<4xi32>, %s: tensor<3xf32>, %o: tensor<4xi32>) {
  // expected-error @+1 {{'glow.channelwise_quantized_convolution' op scales shape is 3, expected 4 (one per output channel)}}
  %0 = glow.channelwise_quantized_convolution %x, %w, %b, %s, %o {kernels = array<i64: 3, 3>} : (tensor<1x3x8x8x!glow.quant<i8, scale = 0.5, offset = 0>>, tensor<4x3x3x3xi8>, tensor<4xi32>, tensor<3xf32>, tensor<4xi32>) -> tensor<1x4x6x6x!glow.quant<i8, scale = 0.5, offset = 0>>
  func.return
}

// -----

func.func @channelwise_conv_4(%x: tensor<1x3x8x8x!glow.quant<i8, scale = 0.5, offset = 0>>, %w: tensor<4x3x3x3xi8>, %b: tensor<4xi64>, %s: tensor<4xf32>, %o: tensor<4xi32>) {
  // expected-error @+1 {{'glow.channelwise_quantized_convolution' op bias must have i32 or floating-point elements, got i64}}
  %0 = glow.channelwise_quantized_convolution %x, %w, %b, %s, %o {kernels = array<i64: 3, 3>} : (tensor<1x3x8x8x!glow.quant<i8, scale = 0.5, offset = 0>>, tensor<4x3x3x3xi8>, tensor<4xi64>, tensor<4xf32>, tensor<4xi32>) -> tensor<1x4x6x6x!glow.quant<i8, scale = 0.5, offset = 0>>
  func.return
}

// -----

func.func @channelwise_conv_5(%x: tensor<1x3x8x8x!glow.quant<i8, scale = 0.5, offset = 0>>, %w: tensor<4x3x3x3xi8>, %b: tensor<4xi32>, %s: tensor<4xf32>, %o: tensor<4xi8>) {
  // expected-error @+1 {{'glow.channelwise_quantized_convolution' op offsets must have i32 elements, got i8}}
  %0 = glow.channelwise_quantized_convolution %x, %w, %b, %s, %o {kernels = array<i64: 3, 3>} : (tensor<1x3x8x8x!glow.quant<i8, scale = 0.5, offset = 0>>, tensor<4x3x3x3xi8>, tensor<4xi32>, tensor<4xf32>, tensor<4xi8>) -> tensor<1x4x6x6x!glow.quant<i8, scale = 0.5, offset = 0>>
  func.return
}

// -----

func.func @channelwise_conv_6(%x: tensor<1x3x8x8x!glow.quant<i8, scale = 0.5, offset = 0>>, %w: tensor<4x3x3x3xi8>, %b: tensor<4xi32>, %s: tensor<4xf32>, %o: tensor<4xi32>) {
  // expected-error @+1 {{'glow.channelwise_quantized_convolution' op result shape is 1x4x8x8, expected 1x4x6x6}}
  %0 = glow.channelwise_quantized_convolution %x, %w, %b, %s, %o {kernels = array<i64: 3, 3>} : (tensor<1x3x8x8x!glow.quant<i8, scale = 0.5, offset = 0>>, tensor<4x3x3x3xi8>, tensor<4xi32>, tensor<4xf32>, tensor<4xi32>) -> tensor<1x4x8x8x!glow.quant<i8, scale = 0.5, offset = 0>>
  func.return
}

// -----

func.func @rowwise_fc_1(%x: tensor<2x6x!glow.quant<i8, scale = 0.5, offset = 0>>, %w: tensor<6x4xi8>, %b: tensor<6xi32>, %s: tensor<6xf32>, %o: tensor<6xi32>) {
  // expected-error @+1 {{'glow.rowwise_quantized_fully_connected' op input columns 6 must equal weights columns 4 (weights are [outputs, inputs])}}
  %0 = glow.rowwise_quantized_fully_connected %x, %w, %b, %s, %o : (tensor<2x6x!glow.quant<i8, scale = 0.5, offset = 0>>, tensor<6x4xi8>, tensor<6xi32>, tensor<6xf32>, tensor<6xi32>) -> tensor<2x6x!glow.quant<i8, scale = 0.5, offset = 0>>
  func.return
}

// -----

func.func @rowwise_fc_2(%x: tensor<2x6x!glow.quant<i8, scale = 0.5, offset = 0>>, %w: tensor<4x6xi8>, %b: tensor<4xi32>, %s: tensor<4xf32>, %o: tensor<4xi32>) {
  // expected-error @+1 {{'glow.rowwise_quantized_fully_connected' op result must have quantized (!glow.quant) elements, got f32}}
  %0 = glow.rowwise_quantized_fully_connected %x, %w, %b, %s, %o : (tensor<2x6x!glow.quant<i8, scale = 0.5, offset = 0>>, tensor<4x6xi8>, tensor<4xi32>, tensor<4xf32>, tensor<4xi32>) -> tensor<2x4xf32>
  func.return
}

// -----

func.func @int_lookup_table_1(%x: tensor<4xf32>, %t: tensor<256xi8>) {
  // expected-error @+1 {{'glow.int_lookup_table' op input must have quantized (!glow.quant) elements, got f32}}
  %0 = glow.int_lookup_table %x, %t : (tensor<4xf32>, tensor<256xi8>) -> tensor<4x!glow.quant<i8, scale = 0.5, offset = 0>>
  func.return
}

// -----

func.func @int_lookup_table_2(%x: tensor<4x!glow.quant<i8, scale = 0.5, offset = 0>>, %t: tensor<255xi8>) {
  // expected-error @+1 {{'glow.int_lookup_table' op table shape is 255, expected 256}}
  %0 = glow.int_lookup_table %x, %t : (tensor<4x!glow.quant<i8, scale = 0.5, offset = 0>>, tensor<255xi8>) -> tensor<4x!glow.quant<i8, scale = 0.5, offset = 0>>
  func.return
}

// -----

func.func @int_lookup_table_3(%x: tensor<4x!glow.quant<i8, scale = 0.5, offset = 0>>, %t: tensor<256xi32>) {
  // expected-error @+1 {{'glow.int_lookup_table' op table elements i32 must be the result's storage i8}}
  %0 = glow.int_lookup_table %x, %t : (tensor<4x!glow.quant<i8, scale = 0.5, offset = 0>>, tensor<256xi32>) -> tensor<4x!glow.quant<i8, scale = 0.5, offset = 0>>
  func.return
}

// -----

func.func @int_lookup_table_4(%x: tensor<4x!glow.quant<i8, scale = 0.5, offset = 0>>, %t: tensor<256xi8>) {
  // expected-error @+1 {{'glow.int_lookup_table' op result shape is 2x2, expected 4}}
  %0 = glow.int_lookup_table %x, %t : (tensor<4x!glow.quant<i8, scale = 0.5, offset = 0>>, tensor<256xi8>) -> tensor<2x2x!glow.quant<i8, scale = 0.5, offset = 0>>
  func.return
}

// -----

func.func @shift_left_of_floats(%x: tensor<4xf32>, %y: tensor<4xf32>) {
  // expected-error @+1 {{'glow.shift_left' op operands must have integer elements, got f32}}
  %0 = glow.shift_left %x, %y : tensor<4xf32>
  func.return
}

// -----

func.func @shift_right_of_bools(%x: tensor<4xi1>, %y: tensor<4xi1>) {
  // expected-error @+1 {{'glow.shift_right' op operands must have integer elements, got i1}}
  %0 = glow.shift_right %x, %y : tensor<4xi1>
  func.return
}
