// `convert-glow-accel-to-loops`, the first step of convert-glow-accel-to-llvm: repeated
// compute kernels as private functions on byte views of their tiles, an accumulating
// tile computed into a scratch area and added, DMAs as strided copy loops at the
// scratchpad's offsets after the activations. The input programs are those of
// convert-glow-accel-to-llvm.mlir (one holds an unplanned tile: every RUN fails on it).
// RUN: not glow-opt %S/convert-glow-accel-to-llvm.mlir --split-input-file --convert-glow-accel-to-loops --cse | FileCheck %s --check-prefix=LOOPS
// RUN: not glow-opt %S/convert-glow-accel-to-llvm.mlir --split-input-file --convert-glow-accel-to-loops 2>&1 | FileCheck %s --check-prefix=ERR

// LOOPS-LABEL: func.func private @tiled_tile_mat_mul_0(
// LOOPS-SAME:      %out: memref<64xi8> {llvm.noalias}, %in1: memref<64xi8> {llvm.noalias}, %in2: memref<64xi8> {llvm.noalias}) attributes {glow_accel.tile_kernel}
// LOOPS:           memref.view %out[%{{.*}}][] : memref<64xi8> to memref<4x4xf32>
// LOOPS:           arith.mulf
// LOOPS:           func.return
// LOOPS-LABEL: func.func private @tiled_tile_mat_mul_1(
// LOOPS-SAME:      %out: memref<64xi8> {llvm.noalias}, %in1: memref<64xi8> {llvm.noalias}, %in2: memref<64xi8> {llvm.noalias}, %acc: memref<64xi8> {llvm.noalias}) attributes {glow_accel.tile_kernel}
// LOOPS:           %[[TMP:.*]] = memref.view %acc[%{{.*}}][] : memref<64xi8> to memref<4x4xf32>
// LOOPS:           memref.store %{{.*}}, %[[TMP]]
// LOOPS:           %[[DST:.*]] = memref.view %out[%{{.*}}][] : memref<64xi8> to memref<16xf32>
// LOOPS-NEXT:      %[[ACC:.*]] = memref.view %acc[%{{.*}}][] : memref<64xi8> to memref<16xf32>
// LOOPS-NEXT:      %[[C16:.*]] = arith.constant 16 : index
// LOOPS-NEXT:      scf.for %[[E:.*]] = %{{.*}} to %[[C16]] step %{{.*}} {
// LOOPS-NEXT:        %[[P:.*]] = memref.load %[[DST]][%[[E]]] : memref<16xf32>
// LOOPS-NEXT:        %[[Q:.*]] = memref.load %[[ACC]][%[[E]]] : memref<16xf32>
// LOOPS-NEXT:        %[[SUM:.*]] = arith.addf %[[P]], %[[Q]] fastmath<reassoc,contract> : f32
// LOOPS-NEXT:        memref.store %[[SUM]], %[[DST]][%[[E]]] : memref<16xf32>
// LOOPS-NEXT:      }
// LOOPS-NEXT:      func.return
// LOOPS-NOT:   func.func private
// LOOPS-LABEL: func.func @tiled(
// LOOPS-SAME:      %mutableWeight: memref<512xi8> {llvm.noalias}, %activations: memref<1216xi8> {llvm.noalias}) -> i32
// LOOPS-SAME:      glow.activations_size = 1216 : i64
// LOOPS:         %[[C128:.*]] = arith.constant 128 : index
// LOOPS-NEXT:    %[[TA:.*]] = memref.view %activations[%[[C128]]][] : memref<1216xi8> to memref<16xf32>
// LOOPS-NEXT:    %[[C0:.*]] = arith.constant 0 : index
// LOOPS-NEXT:    %[[A:.*]] = memref.view %mutableWeight[%[[C0]]][] : memref<512xi8> to memref<32xf32>
// LOOPS:         scf.for %[[I:.*]] =
// LOOPS-NEXT:      %[[DROW:.*]] = arith.muli %[[I]], %{{.*}} : index
// LOOPS-NEXT:      %[[C8:.*]] = arith.constant 8 : index
// LOOPS-NEXT:      %[[SROW:.*]] = arith.muli %[[I]], %[[C8]] : index
// LOOPS-NEXT:      scf.for %[[J:.*]] =
// LOOPS-NEXT:        %[[D:.*]] = arith.addi %[[DROW]], %[[J]] : index
// LOOPS-NEXT:        %[[S:.*]] = arith.addi %[[SROW]], %[[J]] : index
// LOOPS-NEXT:        %[[X:.*]] = memref.load %[[A]][%[[S]]] : memref<32xf32>
// LOOPS-NEXT:        memref.store %[[X]], %[[TA]][%[[D]]] : memref<16xf32>
// LOOPS:         %[[C192:.*]] = arith.constant 192 : index
// LOOPS-NEXT:    memref.view %activations[%[[C192]]][] : memref<1216xi8> to memref<16xf32>
// LOOPS:         %[[C256:.*]] = arith.constant 256 : index
// LOOPS-NEXT:    %[[VC:.*]] = memref.view %activations[%[[C256]]][] : memref<1216xi8> to memref<64xi8>
// LOOPS-NEXT:    %[[VA:.*]] = memref.view %activations[%[[C128]]][] : memref<1216xi8> to memref<64xi8>
// LOOPS-NEXT:    %[[VB:.*]] = memref.view %activations[%[[C192]]][] : memref<1216xi8> to memref<64xi8>
// LOOPS-NEXT:    func.call @tiled_tile_mat_mul_0(%[[VC]], %[[VA]], %[[VB]])
// LOOPS:         %[[C1152:.*]] = arith.constant 1152 : index
// LOOPS-NEXT:    %[[VACC:.*]] = memref.view %activations[%[[C1152]]][] : memref<1216xi8> to memref<64xi8>
// LOOPS-NEXT:    func.call @tiled_tile_mat_mul_1(%[[VC]], %[[VA]], %[[VB]], %[[VACC]])
// LOOPS-NEXT:    %[[C384:.*]] = arith.constant 384 : index
// LOOPS-NEXT:    %[[C:.*]] = memref.view %mutableWeight[%[[C384]]][] : memref<512xi8> to memref<32xf32>
// LOOPS-NEXT:    %[[TC:.*]] = memref.view %activations[%[[C256]]][] : memref<1216xi8> to memref<16xf32>
// LOOPS-NEXT:    scf.for
// LOOPS-NEXT:      arith.constant 8 : index
// LOOPS:             memref.load %[[TC]]
// LOOPS-NEXT:        memref.store %{{.*}}, %[[C]]
// LOOPS:         func.call @tiled_tile_mat_mul_0(%[[VC]], %[[VA]], %[[VB]])
// LOOPS:         func.call @tiled_tile_mat_mul_1(%[[VC]], %[[VA]], %[[VB]], %[[VACC]])
// LOOPS:         func.return
// LOOPS-NOT:   func.func private
// LOOPS-LABEL: func.func @conv_without_bias(
// LOOPS-SAME:      %activations: memref<704xi8> {llvm.noalias}) -> i32
// The CPU kernels' scratch (im2col columns at 320, gemm's accumulation tile at 384) is
// after the zero bias, viewed at the function's start.
// LOOPS-NEXT:    %[[C384:.*]] = arith.constant 384 : index
// LOOPS-NEXT:    memref.view %activations[%[[C384]]][] : memref<704xi8> to memref<4x20xf32>
// LOOPS-NEXT:    %[[C320:.*]] = arith.constant 320 : index
// LOOPS-NEXT:    memref.view %activations[%[[C320]]][] : memref<704xi8> to memref<64xi8>
// LOOPS:         %[[C256:.*]] = arith.constant 256 : index
// LOOPS-NEXT:    %[[ZERO:.*]] = memref.view %activations[%[[C256]]][] : memref<704xi8> to memref<4xi8>
// LOOPS-NEXT:    %[[Z:.*]] = arith.constant 0 : i8
// LOOPS:         scf.for %[[I:.*]] =
// LOOPS-NEXT:      memref.store %[[Z]], %[[ZERO]][%[[I]]] : memref<4xi8>
// LOOPS-NEXT:    }
// LOOPS:         memref.view %activations[%[[C256]]][] : memref<704xi8> to memref<1xf32>
// LOOPS:         arith.maximumf
// LOOPS-NOT:     func.call

// ERR-NOT: Traceback
// ERR: convert-glow-accel-to-loops: @unplanned: 1 scratchpad_alloc(s) without an offset (the first: glow_accel.scratchpad_alloc %t : memref<4xf32, 1 : i64> at {{.*}}); run accel-plan-scratchpad first
