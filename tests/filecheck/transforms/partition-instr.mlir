// partition places the ops of a `glow` graph; an instruction program (after
// lower-to-instr) has none it could mark, and is refused at its function rather than
// passed through unmarked.
//
// RUN: glow-opt %s -p 'partition{num-devices=2}' --verify-diagnostics
// RUN: not glow-opt %s -p 'partition{num-devices=2}' 2>&1 | FileCheck %s
// CHECK: error: 'glow_ir.func' op partition needs a `glow` graph (a func.func of glow ops), and @main is an instruction program: partition the graph before lower-to-instr
// CHECK-NOT: Traceback

// expected-error @+1 {{partition needs a `glow` graph (a func.func of glow ops), and @main is an instruction program: partition the graph before lower-to-instr}}
glow_ir.func @main declare {
  glow_ir.weight @x mutable input : memref<4xf32>
  glow_ir.weight @y mutable output : memref<4xf32>
} program(%x, %y) {
  glow_ir.relu @out %y, @in %x : memref<4xf32>
}
