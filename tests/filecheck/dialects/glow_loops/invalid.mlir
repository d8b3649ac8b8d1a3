// Every verifier message of the glow_loops dialect (glow_loops.prefetch: one index per
// dimension of its memref, a locality of 0 to 3), one per chunk, with MLIR's
// expected-error semantics.
//
// RUN: glow-opt %s --split-input-file --verify-diagnostics

func.func @too_few_indices(%a: memref<4x64xf32>, %i: index) {
  // expected-error @+1 {{1 indices into memref<4x64xf32>}}
  glow_loops.prefetch %a[%i] {locality = 3 : i32} : memref<4x64xf32>
  func.return
}

// -----

func.func @locality_out_of_range(%a: memref<64xf32>, %i: index) {
  // expected-error @+1 {{locality is 0 to 3}}
  glow_loops.prefetch %a[%i] {locality = 4 : i32} : memref<64xf32>
  func.return
}
