// Every verifier message of the glow_ir dialect (access kinds, weights, the function,
// activations, views, copy/insert/extract, the compute instructions' shape checks borrowed
// from the graph ops) and its parse errors, one per chunk, with MLIR's expected-error
// semantics.
//
// RUN: glow-opt %s --split-input-file --verify-diagnostics

// ===== access kinds (access.py)

glow_ir.func @bad_kind declare {
  glow_ir.weight @x mutable input : memref<4xf32>
} program(%x) {
  %a = glow_ir.alloc_activation : memref<4xf32>
  // expected-error @+1 {{expected @in, @out or @inout, got @read}}
  glow_ir.relu @out %a, @read %x : memref<4xf32>
  glow_ir.dealloc_activation %a : memref<4xf32>
}

// -----

glow_ir.func @wrong_kinds declare {
  glow_ir.weight @x mutable input : memref<4xf32>
} program(%x) {
  %a = glow_ir.alloc_activation : memref<4xf32>
  // expected-error @+1 {{'glow_ir.relu' op operand access must be (@out, @in), got (@inout, @in)}}
  glow_ir.relu @inout %a, @in %x : memref<4xf32>
  glow_ir.dealloc_activation %a : memref<4xf32>
}

// -----

glow_ir.func @generic_kind declare {
  glow_ir.weight @x mutable input : memref<4xf32>
} program(%x) {
  %a = glow_ir.alloc_activation : memref<4xf32>
  // expected-error @+1 {{access kinds must be in, out or inout, got ['write', 'in']}}
  "glow_ir.relu"(%a, %x) <{access = ["write", "in"]}> : (memref<4xf32>, memref<4xf32>) -> ()
  glow_ir.dealloc_activation %a : memref<4xf32>
}

// -----

glow_ir.func @kind_count declare {
  glow_ir.weight @x mutable input : memref<4xf32>
} program(%x) {
  %a = glow_ir.alloc_activation : memref<4xf32>
  // expected-error @+1 {{has 2 operands but 1 access kinds}}
  "glow_ir.relu"(%a, %x) <{access = ["out"]}> : (memref<4xf32>, memref<4xf32>) -> ()
  glow_ir.dealloc_activation %a : memref<4xf32>
}

// -----

glow_ir.func @type_count declare {
  glow_ir.weight @x mutable input : memref<4xf32>
  glow_ir.weight @y mutable output : memref<4xf32>
} program(%x, %y) {
  // expected-error @+1 {{expected 1 or 3 operand types, got 2}}
  glow_ir.element_add @out %y, @in %x, @in %x : memref<4xf32>, memref<4xf32>
}

// -----

glow_ir.func @write_constant declare {
  glow_ir.weight @w constant : memref<2xf32> = dense_resource<w> : tensor<2xf32>
  glow_ir.weight @x mutable input : memref<2xf32>
} program(%w, %x) {
  // expected-error @+1 {{'glow_ir.relu' op writes (@out) to constant weight @w}}
  glow_ir.relu @out %w, @in %x : memref<2xf32>
}

{-#
  dialect_resources: {
    builtin: {
      w: "0x040000000000003f0000803f"
    }
  }
#-}

// -----

glow_ir.func @write_constant_view declare {
  glow_ir.weight @w constant : memref<2x2xf32> = dense_resource<w> : tensor<2x2xf32>
  glow_ir.weight @x mutable input : memref<2xf32>
} program(%w, %x) {
  %v = glow_ir.tensor_view %w[1, 0] : memref<2x2xf32> to memref<2xf32>
  // expected-error @+1 {{'glow_ir.copy' op writes (@out) to constant weight @w}}
  glow_ir.copy @out %v, @in %x : memref<2xf32>
}

{-#
  dialect_resources: {
    builtin: {
      w: "0x040000000000003f0000803f0000c03f00000040"
    }
  }
#-}

// -----

glow_ir.func @write_constant_input declare {
  glow_ir.weight @x constant input : memref<2xf32>
  glow_ir.weight @y mutable output : memref<2xf32>
} program(%x, %y) {
  // expected-error @+1 {{'glow_ir.insert_tensor' op writes (@inout) to constant weight @x}}
  glow_ir.insert_tensor @inout %x, @in %y {offsets = array<i64: 0>} : memref<2xf32>
}

// ===== compute instructions: the graph op's checks on the instruction's types

// -----

glow_ir.func @unary_shape declare {
  glow_ir.weight @x mutable input : memref<4xf32>
  glow_ir.weight @y mutable output : memref<5xf32>
} program(%x, %y) {
  // expected-error @+1 {{'glow_ir.relu' op}}
  glow_ir.relu @out %y, @in %x : memref<5xf32>, memref<4xf32>
}

// -----

glow_ir.func @conv_shape declare {
  glow_ir.weight @x mutable input : memref<1x3x8x8xf32>
  glow_ir.weight @w constant : memref<4x3x3x3xf32> = dense_resource<w> : tensor<4x3x3x3xf32>
  glow_ir.weight @b constant : memref<4xf32> = dense_resource<b> : tensor<4xf32>
  glow_ir.weight @y mutable output : memref<1x4x8x8xf32>
} program(%x, %w, %b, %y) {
  // expected-error @+1 {{'glow_ir.convolution' op result shape is 1x4x8x8, expected 1x4x6x6}}
  glow_ir.convolution @out %y, @in %x, @in %w, @in %b {kernels = array<i64: 3, 3>} : memref<1x4x8x8xf32>, memref<1x3x8x8xf32>, memref<4x3x3x3xf32>, memref<4xf32>
}

{-#
  dialect_resources: {
    builtin: {
      b: "0x040000000000003f0000803f0000c03f00000040",
      w: "0x040000000000003f0000803f0000c03f0000004000002040000040400000604000008040000090400000a0400000b0400000c0400000d0400000e0400000f0400000004100000841000010410000184100002041000028410000304100003841000040410000484100005041000058410000604100006841000070410000784100008041000084410000884100008c4100009041000094410000984100009c410000a0410000a4410000a8410000ac410000b0410000b4410000b8410000bc410000c0410000c4410000c8410000cc410000d0410000d4410000d8410000dc410000e0410000e4410000e8410000ec410000f0410000f4410000f8410000fc41000000420000024200000442000006420000084200000a4200000c4200000e42000010420000124200001442000016420000184200001a4200001c4200001e42000020420000224200002442000026420000284200002a4200002c4200002e42000030420000324200003442000036420000384200003a4200003c4200003e42000040420000424200004442000046420000484200004a4200004c4200004e420000504200005242000054420000564200005842"
    }
  }
#-}

// -----

glow_ir.func @unknown_attr declare {
  glow_ir.weight @x mutable input : memref<4xf32>
  glow_ir.weight @y mutable output : memref<4xf32>
} program(%x, %y) {
  // expected-error @+1 {{'glow_ir.soft_max' op has unknown attribute 'axes' (its attributes: axis)}}
  glow_ir.soft_max @out %y, @in %x {axes = 0 : i64} : memref<4xf32>
}

// ===== copy, extract_tensor, insert_tensor (instructions.py)

// -----

glow_ir.func @copy_types declare {
  glow_ir.weight @x mutable input : memref<4xf32>
  glow_ir.weight @y mutable output : memref<4xf16>
} program(%x, %y) {
  // expected-error @+1 {{copies memref<4xf32> to memref<4xf16>; types must be equal}}
  glow_ir.copy @out %y, @in %x : memref<4xf16>, memref<4xf32>
}

// -----

glow_ir.func @extract_box declare {
  glow_ir.weight @x mutable input : memref<4x4xf32>
  glow_ir.weight @y mutable output : memref<2x2xf32>
} program(%x, %y) {
  // expected-error @+1 {{dest 2x2 at offsets [3, 0] leaves the 4x4 buffer in dimension 0}}
  glow_ir.extract_tensor @out %y, @in %x {offsets = array<i64: 3, 0>} : memref<2x2xf32>, memref<4x4xf32>
}

// -----

glow_ir.func @extract_rank declare {
  glow_ir.weight @x mutable input : memref<4x4xf32>
  glow_ir.weight @y mutable output : memref<2xf32>
} program(%x, %y) {
  // expected-error @+1 {{dest of rank 1, offsets of 2 and a rank-2 buffer must agree}}
  glow_ir.extract_tensor @out %y, @in %x {offsets = array<i64: 0, 0>} : memref<2xf32>, memref<4x4xf32>
}

// -----

glow_ir.func @extract_elem declare {
  glow_ir.weight @x mutable input : memref<4xf32>
  glow_ir.weight @y mutable output : memref<2xi32>
} program(%x, %y) {
  // expected-error @+1 {{element types differ: i32 and f32}}
  glow_ir.extract_tensor @out %y, @in %x {offsets = array<i64: 0>} : memref<2xi32>, memref<4xf32>
}

// -----

glow_ir.func @extract_no_offsets declare {
  glow_ir.weight @x mutable input : memref<4xf32>
  glow_ir.weight @y mutable output : memref<2xf32>
} program(%x, %y) {
  // expected-error @+1 {{requires attribute 'offsets'}}
  glow_ir.extract_tensor @out %y, @in %x : memref<2xf32>, memref<4xf32>
}

// -----

glow_ir.func @insert_count declare {
  glow_ir.weight @x mutable input : memref<2xf32>
  glow_ir.weight @y mutable output : memref<8xf32>
} program(%x, %y) {
  // expected-error @+1 {{src 2 at offsets [4] leaves the 8 buffer in dimension 0}}
  glow_ir.insert_tensor @inout %y, @in %x {offsets = array<i64: 4>, count = 3 : i64, axis = 0 : i64} : memref<8xf32>, memref<2xf32>
}

// -----

glow_ir.func @insert_axis declare {
  glow_ir.weight @x mutable input : memref<2xf32>
  glow_ir.weight @y mutable output : memref<8xf32>
} program(%x, %y) {
  // expected-error @+1 {{count 1 must be positive and axis 1 a dimension}}
  glow_ir.insert_tensor @inout %y, @in %x {offsets = array<i64: 0>, axis = 1 : i64} : memref<8xf32>, memref<2xf32>
}

// ===== weights (memory.py)

// -----

glow_ir.func @mutability declare {
  // expected-error @+1 {{mutability must be constant or mutable, got 'frozen'}}
  glow_ir.weight @x frozen input : memref<4xf32>
} program(%x) {
}

// -----

glow_ir.func @role declare {
  // expected-error @+1 {{role must be input or output, got 'state'}}
  "glow_ir.weight"() <{sym_name = "x", mutability = "mutable", type = memref<4xf32>, role = "state"}> : () -> ()
} program(%x) {
}

// -----

glow_ir.func @value_type declare {
  // expected-error @+1 {{value of type tensor<3xf32> does not match the weight's type memref<4xf32>}}
  glow_ir.weight @w constant : memref<4xf32> = dense_resource<w> : tensor<3xf32>
} program(%w) {
}

{-#
  dialect_resources: {
    builtin: {
      w: "0x040000000000003f0000803f0000c03f"
    }
  }
#-}

// -----

glow_ir.func @placeholder_value declare {
  // expected-error @+1 {{an input placeholder has no value}}
  glow_ir.weight @w constant input : memref<4xf32> = dense_resource<w> : tensor<4xf32>
} program(%w) {
}

{-#
  dialect_resources: {
    builtin: {
      w: "0x040000000000003f0000803f0000c03f00000040"
    }
  }
#-}

// -----

glow_ir.func @neither declare {
  // expected-error @+1 {{a weight is a placeholder (input/output) or has a value}}
  glow_ir.weight @w mutable : memref<4xf32>
} program(%w) {
}

// -----

glow_ir.func @weight_type declare {
  // expected-error @+1 {{a weight's type is a memref, got tensor<4xf32>}}
  glow_ir.weight @w mutable input : tensor<4xf32>
} program(%w) {
}

// -----

glow_ir.func @weight_value declare {
  // expected-error @+1 {{a weight's value is a dense_resource, got dense<1.000000e+00> : tensor<4xf32>}}
  glow_ir.weight @w constant : memref<4xf32> = dense<1.0> : tensor<4xf32>
} program(%w) {
}

// ===== the function

// -----

// expected-error @+1 {{declare holds only glow_ir.weight, found glow_ir.alloc_activation}}
glow_ir.func @declare_op declare {
  %a = glow_ir.alloc_activation : memref<4xf32>
} program() {
}

// -----

// expected-error @+1 {{weight @x is declared twice}}
glow_ir.func @twice declare {
  glow_ir.weight @x mutable input : memref<4xf32>
  glow_ir.weight @x mutable output : memref<4xf32>
} program(%x, %y) {
}

// -----

glow_ir.func @arg_count declare {
  glow_ir.weight @x mutable input : memref<4xf32>
// expected-error @+1 {{program names 2 arguments for 1 weights}}
} program(%x, %y) {
}

// -----

// expected-error @+1 {{program has 0 arguments for 1 weights}}
"glow_ir.func"() <{sym_name = "generic_args"}> ({
  "glow_ir.weight"() <{sym_name = "x", mutability = "mutable", type = memref<4xf32>, role = "input"}> : () -> ()
}, {
^bb0:
}) : () -> ()

// -----

// expected-error @+1 {{program argument #0 has type memref<2xf32>, weight @x is memref<4xf32>}}
"glow_ir.func"() <{sym_name = "generic_types"}> ({
  "glow_ir.weight"() <{sym_name = "x", mutability = "mutable", type = memref<4xf32>, role = "input"}> : () -> ()
}, {
^bb0(%x: memref<2xf32>):
}) : () -> ()

// ===== activations and views

// -----

glow_ir.func @offset declare {
} program() {
  // expected-error @+1 {{offset must be non-negative, got -64}}
  %a = glow_ir.alloc_activation {offset = -64 : i64} : memref<4xf32>
  glow_ir.dealloc_activation %a : memref<4xf32>
}

// -----

// expected-error @+1 {{expects parent op to be one of 'glow_ir.func', 'glow_ir.if'}}
%a = glow_ir.alloc_activation : memref<4xf32>

// -----

glow_ir.func @dealloc_weight declare {
  glow_ir.weight @x mutable input : memref<4xf32>
} program(%x) {
  // expected-error @+1 {{deallocates a value that is not a glow_ir.alloc_activation}}
  glow_ir.dealloc_activation %x : memref<4xf32>
}

// -----

glow_ir.func @view_elem declare {
  glow_ir.weight @x mutable input : memref<4xf32>
} program(%x) {
  // expected-error @+1 {{view element type i32 differs from the source's f32}}
  %v = glow_ir.tensor_view %x[0] : memref<4xf32> to memref<4xi32>
}

// -----

glow_ir.func @view_rank declare {
  glow_ir.weight @x mutable input : memref<4xf32>
} program(%x) {
  // expected-error @+1 {{has 2 offsets for a rank-1 source}}
  %v = glow_ir.tensor_view %x[0, 0] : memref<4xf32> to memref<2xf32>
}

// -----

glow_ir.func @view_offset declare {
  glow_ir.weight @x mutable input : memref<2x4xf32>
} program(%x) {
  // expected-error @+1 {{offset 4 of dimension 1 is outside 0..3}}
  %v = glow_ir.tensor_view %x[0, 4] : memref<2x4xf32> to memref<2xf32>
}

// -----

glow_ir.func @view_past_end declare {
  glow_ir.weight @x mutable input : memref<2x4xf32>
} program(%x) {
  // expected-error @+1 {{view of 4 elements at element 6 ends at 10, past the source's 8 elements}}
  %v = glow_ir.tensor_view %x[1, 2] : memref<2x4xf32> to memref<4xf32>
}

// ===== buffers are static, contiguous and sized; attributes are well-kinded

// -----

glow_ir.func @dynamic declare {
} program() {
  // expected-error @+1 {{activation type memref<?xf32> must have a static shape}}
  %a = glow_ir.alloc_activation : memref<?xf32>
  glow_ir.dealloc_activation %a : memref<?xf32>
}

// -----

glow_ir.func @index_elem declare {
  // expected-error @+1 {{weight type memref<4xindex> has element type index, which has no byte size here}}
  glow_ir.weight @x mutable input : memref<4xindex>
} program(%x) {
}

// -----

glow_ir.func @strided declare {
  // expected-error @+1 {{must have the identity layout}}
  glow_ir.weight @x mutable input : memref<4xf32, strided<[2]>>
} program(%x) {
}

// -----

// expected-error @+1 {{alignment must be positive, got 0}}
glow_ir.func @alignment declare {
} program() {
} attributes {activations_size = 0 : i64, alignment = 0 : i64}

// -----

// expected-error @+1 {{activations_size must be non-negative, got -1}}
glow_ir.func @arena declare {
} program() {
} attributes {activations_size = -1 : i64}

// -----

glow_ir.func @offsets_kind declare {
  glow_ir.weight @x mutable input : memref<4xf32>
  glow_ir.weight @y mutable output : memref<2xf32>
} program(%x, %y) {
  // expected-error @+1 {{attribute 'offsets' must be array<i64: ...>, got [0 : i64]}}
  glow_ir.extract_tensor @out %y, @in %x {offsets = [0]} : memref<2xf32>, memref<4xf32>
}

// -----

glow_ir.func @count_kind declare {
  glow_ir.weight @x mutable input : memref<2xf32>
  glow_ir.weight @y mutable output : memref<8xf32>
} program(%x, %y) {
  // expected-error @+1 {{attribute 'count' must be an integer, got 1.500000e+00 : f32}}
  glow_ir.insert_tensor @inout %y, @in %x {offsets = array<i64: 0>, count = 1.5 : f32} : memref<8xf32>, memref<2xf32>
}

// -----

// Dominance (ir/text.py check_dominance): a value used before its definition.
glow_ir.func @view_used_before_defined declare {
  glow_ir.weight @x mutable input : memref<8xf32>
  glow_ir.weight @y mutable output : memref<2x4xf32>
} program(%x, %y) {
  // expected-error @+1 {{'glow_ir.relu' op operand #1 does not dominate this use (defined later, at}}
  glow_ir.relu @out %y, @in %v : memref<2x4xf32>
  %v = glow_ir.tensor_view %x[0] : memref<8xf32> to memref<2x4xf32>
}

// -----

// A view of itself (dse looped forever looking for its root).
glow_ir.func @view_of_itself declare {
  glow_ir.weight @y mutable output : memref<8xf32>
} program(%y) {
  // expected-error @+1 {{'glow_ir.tensor_view' op operand #0 does not dominate this use (defined by this op)}}
  %v = glow_ir.tensor_view %v[0] : memref<8xf32> to memref<8xf32>
  glow_ir.splat @out %v {value = 1.0 : f32} : memref<8xf32>
}

// -----

glow_ir.func @dealloc_before_alloc declare {
} program() {
  // expected-error @+1 {{'glow_ir.dealloc_activation' op operand #0 does not dominate this use}}
  glow_ir.dealloc_activation %a : memref<8xf32>
  %a = glow_ir.alloc_activation : memref<8xf32>
}

// ===== glow_ir.if (control_flow.py)

// -----

glow_ir.func @if_cond declare {
  glow_ir.weight @c mutable input : memref<2xi1>
  glow_ir.weight @y mutable output : memref<4xf32>
} program(%c, %y) {
  // expected-error @+1 {{'glow_ir.if' op condition must be a one-element memref of i1, got memref<2xi1>}}
  glow_ir.if @out %y, @in %c : memref<4xf32>, memref<2xi1> {
  ^bb0(%y1: memref<4xf32>, %c1: memref<2xi1>):
  } else {
  ^bb0(%y2: memref<4xf32>, %c2: memref<2xi1>):
  }
}

// -----

glow_ir.func @if_no_cond declare {
  glow_ir.weight @y mutable output : memref<4xf32>
} program(%y) {
  // expected-error @+1 {{'glow_ir.if' op has no condition: after the @out destinations, the condition and the sources are @in}}
  glow_ir.if @out %y : memref<4xf32> {
  ^bb0(%y1: memref<4xf32>):
  } else {
  ^bb0(%y2: memref<4xf32>):
  }
}

// -----

glow_ir.func @if_access declare {
  glow_ir.weight @c mutable input : memref<i1>
  glow_ir.weight @y mutable output : memref<4xf32>
} program(%c, %y) {
  // expected-error @+1 {{'glow_ir.if' op operand access must be (@in, @in), got (@in, @inout)}}
  glow_ir.if @in %c, @inout %y : memref<i1>, memref<4xf32> {
  ^bb0(%c1: memref<i1>, %y1: memref<4xf32>):
  } else {
  ^bb0(%c2: memref<i1>, %y2: memref<4xf32>):
  }
}

// -----

glow_ir.func @if_args declare {
  glow_ir.weight @c mutable input : memref<i1>
  glow_ir.weight @y mutable output : memref<4xf32>
} program(%c, %y) {
  // expected-error @+1 {{'glow_ir.if' op the else program's arguments must have the operands' types}}
  glow_ir.if @out %y, @in %c : memref<4xf32>, memref<i1> {
  ^bb0(%y1: memref<4xf32>, %c1: memref<i1>):
  } else {
  ^bb0(%y2: memref<4xf32>):
  }
}

// -----

glow_ir.func @if_uses_outer declare {
  glow_ir.weight @c mutable input : memref<i1>
} program(%c) {
  %a = glow_ir.alloc_activation : memref<4xf32>
  // expected-error @+1 {{'glow_ir.if' op Operation using value defined out of its IsolatedFromAbove parent}}
  glow_ir.if @in %c, @in %a : memref<i1>, memref<4xf32> {
  ^bb0(%c1: memref<i1>, %a1: memref<4xf32>):
    glow_ir.dealloc_activation %a : memref<4xf32>
  } else {
  ^bb0(%c2: memref<i1>, %a2: memref<4xf32>):
  }
  glow_ir.dealloc_activation %a : memref<4xf32>
}

// ===== glow_ir.loop (control_flow.py)

// -----

glow_ir.func @loop_short declare {
  glow_ir.weight @y mutable output : memref<4xf32>
  glow_ir.weight @n mutable input : memref<i64>
} program(%y, %n) {
  // expected-error @+1 {{'glow_ir.loop' op needs, after the carried values (@inout), the iteration number and the condition (@out), the trip count and the first condition (@in)}}
  glow_ir.loop @inout %y, @in %n : memref<4xf32>, memref<i64> {
  ^bb0(%y1: memref<4xf32>, %n1: memref<i64>):
  }
}

// -----

glow_ir.func @loop_types declare {
  glow_ir.weight @y mutable output : memref<4xf32>
  glow_ir.weight @n mutable input : memref<i32>
  glow_ir.weight @c mutable input : memref<i1>
} program(%y, %n, %c) {
  %i = glow_ir.alloc_activation : memref<i64>
  %k = glow_ir.alloc_activation : memref<i1>
  // expected-error @+1 {{'glow_ir.loop' op the trip count must be a one-element memref of i64, got memref<i32>}}
  glow_ir.loop @inout %y, @out %i, @out %k, @in %n, @in %c : memref<4xf32>, memref<i64>, memref<i1>, memref<i32>, memref<i1> {
  ^bb0(%y1: memref<4xf32>, %i1: memref<i64>, %k1: memref<i1>, %n1: memref<i32>, %c1: memref<i1>):
  }
  glow_ir.dealloc_activation %k : memref<i1>
  glow_ir.dealloc_activation %i : memref<i64>
}

// -----

glow_ir.func @loop_args declare {
  glow_ir.weight @y mutable output : memref<4xf32>
  glow_ir.weight @n mutable input : memref<i64>
  glow_ir.weight @c mutable input : memref<i1>
} program(%y, %n, %c) {
  %i = glow_ir.alloc_activation : memref<i64>
  %k = glow_ir.alloc_activation : memref<i1>
  // expected-error @+1 {{'glow_ir.loop' op the body's arguments must have the operands' types}}
  glow_ir.loop @inout %y, @out %i, @out %k, @in %n, @in %c : memref<4xf32>, memref<i64>, memref<i1>, memref<i64>, memref<i1> {
  ^bb0(%y1: memref<4xf32>):
  }
  glow_ir.dealloc_activation %k : memref<i1>
  glow_ir.dealloc_activation %i : memref<i64>
}

// -----

glow_ir.func @loop_access declare {
  glow_ir.weight @y mutable output : memref<4xf32>
  glow_ir.weight @n mutable input : memref<i64>
  glow_ir.weight @c mutable input : memref<i1>
} program(%y, %n, %c) {
  %i = glow_ir.alloc_activation : memref<i64>
  %k = glow_ir.alloc_activation : memref<i1>
  // expected-error @+1 {{'glow_ir.loop' op operand access must be (@inout, @out, @out, @in, @in), got (@inout, @out, @in, @in, @in)}}
  glow_ir.loop @inout %y, @out %i, @in %k, @in %n, @in %c : memref<4xf32>, memref<i64>, memref<i1>, memref<i64>, memref<i1> {
  ^bb0(%y1: memref<4xf32>, %i1: memref<i64>, %k1: memref<i1>, %n1: memref<i64>, %c1: memref<i1>):
  }
  glow_ir.dealloc_activation %k : memref<i1>
  glow_ir.dealloc_activation %i : memref<i64>
}
