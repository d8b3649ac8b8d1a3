// Bad input ends in one located message on stderr, exit status 1 (`not` fails on 0; the
// exact status 1 is checked by tests/unit/test_glow_opt.py) and no Python traceback;
// `--debug` shows the traceback.

// An unknown op, at its name:
// RUN: not glow-opt %S/inputs/unknown-op.mlir 2>&1 | FileCheck %s --check-prefix=UNKNOWN
// UNKNOWN-NOT:  Traceback
// UNKNOWN:      unknown-op.mlir:3:8: error: unknown op 'glow.frobnicate'
// UNKNOWN-NEXT:   %1 = glow.frobnicate %0 : tensor<4xf32>
// UNKNOWN-NEXT:        ^^^^^^^^^^^^^^^
// UNKNOWN-NOT:  Traceback

// A file cut off in the middle of an op:
// RUN: not glow-opt %S/inputs/truncated.mlir 2>&1 | FileCheck %s --check-prefix=TRUNC
// TRUNC-NOT:  Traceback
// TRUNC:      truncated.mlir:4:1: error: unexpected end of input: '>' expected in dense array
// TRUNC-NOT:  Traceback

// Bytes that are not MLIR, and bytes that are not UTF-8 text:
// RUN: not glow-opt %S/inputs/float-overflow.mlir 2>&1 | FileCheck %s --check-prefix=OVERFLOW
// OVERFLOW-NOT:  Traceback
// OVERFLOW:      float-overflow.mlir:3:45: error: literal does not fit its type
// OVERFLOW-NOT:  internal error

// RUN: not glow-opt %S/inputs/garbage.mlir 2>&1 | FileCheck %s --check-prefix=GARBAGE
// GARBAGE-NOT:  Traceback
// GARBAGE:      garbage.mlir:1:3: error: Unexpected character: \x03
// GARBAGE-NOT:  Traceback
// RUN: not glow-opt %S/inputs/non-utf8.mlir 2>&1 | FileCheck %s --check-prefix=UTF8
// UTF8-NOT:  Traceback
// UTF8:      non-utf8.mlir:4:1: error: input is not UTF-8 text (byte 0xff at offset 33)
// UTF8-NOT:  Traceback

// A file that does not exist, or is a directory:
// RUN: not glow-opt %t.does-not-exist.mlir 2>&1 | FileCheck %s --check-prefix=MISSING
// MISSING-NOT:  Traceback
// MISSING:      glow-opt: error: cannot read '{{.*}}does-not-exist.mlir': no such file{{$}}
// MISSING-NOT:  Traceback
// RUN: not glow-opt %S/inputs 2>&1 | FileCheck %s --check-prefix=DIR
// DIR:      glow-opt: error: cannot read '{{.*}}inputs': it is a directory{{$}}

// An unknown pass, as a flag and in a pipeline; a bad pass option; a bad pipeline:
// RUN: not glow-opt %s --frobnicate 2>&1 | FileCheck %s --check-prefix=FLAG
// FLAG-NOT:  Traceback
// FLAG:      glow-opt: error: unrecognized arguments: --frobnicate (not an option or a registered pass)
// FLAG-NOT:  Traceback
// RUN: not glow-opt %s -p cse,frobnicate 2>&1 | FileCheck %s --check-prefix=PIPE
// PIPE-NOT:  Traceback
// PIPE:      glow-opt: error: invalid pass pipeline 'cse,frobnicate': unknown pass(es): ['frobnicate']
// PIPE-NOT:  Traceback
// RUN: not glow-opt %s --constant-fold=max-elements=many 2>&1 | FileCheck %s --check-prefix=OPTION
// OPTION-NOT:  Traceback
// OPTION:      glow-opt: error: invalid pass pipeline 'constant-fold{max-elements=many}': {{.*}}many
// OPTION-NOT:  Traceback
// RUN: not glow-opt %s -p 'glow-optimize{max-iterations=0}' 2>&1 | FileCheck %s --check-prefix=ITERS
// RUN: not glow-opt %s -p 'glow-graph-pipeline{max-iterations=-1}' 2>&1 | FileCheck %s --check-prefix=ITERS
// ITERS-NOT:  Traceback
// ITERS:      max-iterations must be 1 or more, got {{-1|0}}
// RUN: not glow-opt %s -p 'cse{' 2>&1 | FileCheck %s --check-prefix=SPEC
// SPEC-NOT:  Traceback
// SPEC:      glow-opt: error: invalid pass pipeline 'cse{': at column 5: expected argument name here
// SPEC-NOT:  {{.}}

// A verifier failure, located at the op (line and column of its name), in a file with
// a good function before it:
// RUN: not glow-opt %S/inputs/verifier.mlir 2>&1 | FileCheck %s --check-prefix=VERIFY
// VERIFY-NOT:  Traceback
// VERIFY:      verifier.mlir:8:8: error: 'glow.convolution' op group 2 does not divide the 3 input channels
// VERIFY-NOT:  Traceback

// A weight blob too small for its type, at the constant that uses it:
// RUN: not glow-opt %S/inputs/blob-size.mlir 2>&1 | FileCheck %s --check-prefix=BLOB
// BLOB-NOT:  Traceback

// A weight with no blob in the file (its dialect_resources section was lost), at the
// constant that uses it:
// RUN: not glow-opt %S/inputs/missing-blob.mlir 2>&1 | FileCheck %s --check-prefix=NOBLOB
// NOBLOB-NOT:  Traceback
// NOBLOB:      missing-blob.mlir:2:8: error: 'glow.constant' op dense_resource<w> has no data (no blob 'w' in a {-# dialect_resources #-} section)
// NOBLOB-NOT:  Traceback
// BLOB:      blob-size.mlir:2:8: error: 'glow.constant' op dense_resource<w>: resource blob holds 8 bytes, but tensor<2x2xf32> needs 16
// BLOB-NOT:  Traceback

// `--debug` shows where it came from, then the same message:
// RUN: not glow-opt %S/inputs/verifier.mlir --debug 2>&1 | FileCheck %s --check-prefix=DEBUG
// DEBUG:      Traceback (most recent call last):
// DEBUG:      verifier.mlir:8:8: error: 'glow.convolution' op group 2 does not divide the 3 input channels
// RUN: not glow-opt %S/inputs/unknown-op.mlir --debug 2>&1 | FileCheck %s --check-prefix=DEBUG-PARSE
// DEBUG-PARSE:      Traceback (most recent call last):
// DEBUG-PARSE:      unknown-op.mlir:3:8: error: unknown op 'glow.frobnicate'

func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
  func.return %x : tensor<4xf32>
}

// A value used before its definition (two lines swapped), whatever passes follow (it used
// to pass verification and crash lower-to-instr):
// RUN: not glow-opt %S/inputs/use-before-def.mlir --lower-to-instr 2>&1 | FileCheck %s --check-prefix=DOMINANCE
// DOMINANCE-NOT:  Traceback
// DOMINANCE:      use-before-def.mlir:2:8: error: 'glow.tanh' op operand #0 does not dominate this use (defined later, at {{.*}}use-before-def.mlir:3:8)
// DOMINANCE-NOT:  internal error
