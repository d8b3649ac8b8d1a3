// `convert-glow-accel-to-loops`, the first step of convert-glow-accel-to-llvm: DMAs and
// compute ops as calls of kernel functions on byte views of their tiles, an accumulating
// tile computed into a scratch area and added, DMAs as strided copy loops at the
// scratchpad's offsets after the activations. The input programs are those of
// convert-glow-accel-to-llvm.mlir (one holds an unplanned tile: every RUN fails on it;
// that file checks the error with --verify-diagnostics).
// RUN: not glow-opt %S/convert-glow-accel-to-llvm.mlir --split-input-file --convert-glow-accel-to-loops --cse | FileCheck %s --check-prefix=LOOPS

// Every DMA and compute op is a call of a kernel function (the entry point a straight
// list of calls at constant offsets); equal ones share it: the four loads of A and B
// tiles are one copy kernel (the same box shape, at other offsets), the two steps of the
// tiled matmul two kernels (the second accumulates), each called twice.
// LOOPS-LABEL: func.func private @tiled_k0_dma(
// LOOPS-SAME:      %r0: memref<64xi8> {llvm.noalias}, %r1: memref<112xi8> {llvm.noalias}) attributes {glow.kernel}
// LOOPS-DAG:       %[[TILE:.*]] = memref.view %r0[%{{.*}}][] : memref<64xi8> to memref<16xf32>
// LOOPS-DAG:       %[[SRC:.*]] = memref.view %r1[%{{.*}}][] : memref<112xi8> to memref<28xf32>
// LOOPS:           scf.for %[[I:.*]] =
// LOOPS-NEXT:        %[[DROW:.*]] = arith.muli %[[I]], %{{.*}} : index
// LOOPS-NEXT:        %[[C8:.*]] = arith.constant 8 : index
// LOOPS-NEXT:        %[[SROW:.*]] = arith.muli %[[I]], %[[C8]] : index
// LOOPS-NEXT:        scf.for %[[J:.*]] =
// LOOPS-NEXT:          %[[D:.*]] = arith.addi %[[DROW]], %[[J]] : index
// LOOPS-NEXT:          %[[S:.*]] = arith.addi %[[SROW]], %[[J]] : index
// LOOPS-NEXT:          %[[X:.*]] = memref.load %[[SRC]][%[[S]]] : memref<28xf32>
// LOOPS-NEXT:          memref.store %[[X]], %[[TILE]][%[[D]]] : memref<16xf32>
// LOOPS:           func.return
// The matmul's kernels take the gemm's accumulation tile as scratch (past everything
// else in the activation area).
// LOOPS-LABEL: func.func private @tiled_k1_mat_mul(
// LOOPS-SAME:      %r0: memref<64xi8> {llvm.noalias}, %r1: memref<64xi8> {llvm.noalias}, %r2: memref<64xi8> {llvm.noalias}, %scratch: memref<320xi8> {llvm.noalias}) attributes {glow.kernel}
// LOOPS:           memref.view %r0[%{{.*}}][] : memref<64xi8> to memref<4x4xf32>
// LOOPS:           arith.mulf
// LOOPS:           func.return
// LOOPS-LABEL: func.func private @tiled_k2_mat_mul(
// LOOPS-SAME:      %r0: memref<64xi8> {llvm.noalias}, %r1: memref<64xi8> {llvm.noalias}, %r2: memref<64xi8> {llvm.noalias}, %r3: memref<64xi8> {llvm.noalias}, %scratch: memref<320xi8> {llvm.noalias}) attributes {glow.kernel}
// LOOPS:           %[[TMP:.*]] = memref.view %r3[%{{.*}}][] : memref<64xi8> to memref<4x4xf32>
// LOOPS:           memref.store %{{.*}}, %[[TMP]]
// LOOPS:           %[[DST:.*]] = memref.view %r0[%{{.*}}][] : memref<64xi8> to memref<16xf32>
// LOOPS-NEXT:      %[[ACC:.*]] = memref.view %r3[%{{.*}}][] : memref<64xi8> to memref<16xf32>
// LOOPS-NEXT:      %[[C16:.*]] = arith.constant 16 : index
// LOOPS-NEXT:      scf.for %[[E:.*]] = %{{.*}} to %[[C16]] step %{{.*}} {
// LOOPS-NEXT:        %[[P:.*]] = memref.load %[[DST]][%[[E]]] : memref<16xf32>
// LOOPS-NEXT:        %[[Q:.*]] = memref.load %[[ACC]][%[[E]]] : memref<16xf32>
// LOOPS-NEXT:        %[[SUM:.*]] = arith.addf %[[P]], %[[Q]] fastmath<reassoc,contract> : f32
// LOOPS-NEXT:        memref.store %[[SUM]], %[[DST]][%[[E]]] : memref<16xf32>
// LOOPS-NEXT:      }
// LOOPS-NEXT:      func.return
// The store of the result tile: a copy kernel of its own (the other direction).
// LOOPS-LABEL: func.func private @tiled_k3_dma(
// LOOPS-SAME:      %r0: memref<112xi8> {llvm.noalias}, %r1: memref<64xi8> {llvm.noalias})
// LOOPS-NOT:   func.func private
// The scratchpad is at 128 (after the planned activations), the accumulation temporary
// at 1152, the kernels' scratch at 1216.
// LOOPS-LABEL: func.func @tiled(
// LOOPS-SAME:      %mutableWeight: memref<512xi8> {llvm.noalias}, %activations: memref<1536xi8> {llvm.noalias}) -> i32
// LOOPS-SAME:      glow.activations_size = 1536 : i64
// LOOPS-NOT:     scf.for
// LOOPS:         %[[C128:.*]] = arith.constant 128 : index
// LOOPS-NEXT:    %[[VA:.*]] = memref.view %activations[%[[C128]]][] : memref<1536xi8> to memref<64xi8>
// LOOPS-NEXT:    %[[C0:.*]] = arith.constant 0 : index
// LOOPS-NEXT:    %[[A:.*]] = memref.view %mutableWeight[%[[C0]]][] : memref<512xi8> to memref<112xi8>
// LOOPS-NEXT:    func.call @tiled_k0_dma(%[[VA]], %[[A]])
// LOOPS:         %[[VB:.*]] = memref.view %activations[%{{.*}}][] : memref<1536xi8> to memref<64xi8>
// LOOPS:         func.call @tiled_k0_dma(%[[VB]],
// LOOPS:         %[[VC:.*]] = memref.view %activations[%{{.*}}][] : memref<1536xi8> to memref<64xi8>
// LOOPS-NEXT:    %[[C1216:.*]] = arith.constant 1216 : index
// LOOPS-NEXT:    %[[SCRATCH:.*]] = memref.view %activations[%[[C1216]]][] : memref<1536xi8> to memref<320xi8>
// LOOPS-NEXT:    func.call @tiled_k1_mat_mul(%[[VC]], %[[VA]], %[[VB]], %[[SCRATCH]])
// LOOPS:         func.call @tiled_k0_dma(%[[VA]],
// LOOPS:         func.call @tiled_k0_dma(%[[VB]],
// LOOPS:         %[[C1152:.*]] = arith.constant 1152 : index
// LOOPS-NEXT:    %[[VACC:.*]] = memref.view %activations[%[[C1152]]][] : memref<1536xi8> to memref<64xi8>
// LOOPS-NEXT:    func.call @tiled_k2_mat_mul(%[[VC]], %[[VA]], %[[VB]], %[[VACC]], %[[SCRATCH]])
// LOOPS:         func.call @tiled_k3_dma(%{{.*}}, %[[VC]])
// LOOPS:         func.call @tiled_k1_mat_mul(%[[VC]], %[[VA]], %[[VB]], %[[SCRATCH]])
// LOOPS:         func.call @tiled_k2_mat_mul(%[[VC]], %[[VA]], %[[VB]], %[[VACC]], %[[SCRATCH]])
// LOOPS:         func.call @tiled_k3_dma(%{{.*}}, %[[VC]])
// LOOPS-NOT:     scf.for
// LOOPS:         func.return
// A conv without bias reads a zero bias region (at 256, after the scratchpad), zeroed
// at entry; the CPU kernels' scratch (im2col columns, gemm's accumulation tile) is the
// convolution kernel's scratch argument, at 320 in the activation area (its 4 output
// pixels padded to one vector's 16 columns: kernels_conv's short-row product).
// LOOPS-LABEL: func.func private @conv_without_bias_k2_convolution(
// LOOPS-SAME:      %r3: memref<4xi8> {llvm.noalias}, %scratch: memref<768xi8> {llvm.noalias})
// LOOPS:         memref.view %scratch[%{{.*}}][] : memref<768xi8> to memref<4x16xf32>
// LOOPS:         memref.view %r3[%{{.*}}][] : memref<4xi8> to memref<1xf32>
// LOOPS:         arith.maximumf
// LOOPS-LABEL: func.func @conv_without_bias(
// LOOPS-SAME:      %activations: memref<1088xi8> {llvm.noalias}) -> i32
// LOOPS-NEXT:    %[[C256:.*]] = arith.constant 256 : index
// LOOPS-NEXT:    %[[ZERO:.*]] = memref.view %activations[%[[C256]]][] : memref<1088xi8> to memref<4xi8>
// LOOPS-NEXT:    %[[Z:.*]] = arith.constant 0 : i8
// LOOPS:         scf.for %[[I:.*]] =
// LOOPS-NEXT:      memref.store %[[Z]], %[[ZERO]][%[[I]]] : memref<4xi8>
// LOOPS-NEXT:    }
// LOOPS:         %[[C320:.*]] = arith.constant 320 : index
// LOOPS-NEXT:    %[[S:.*]] = memref.view %activations[%[[C320]]][] : memref<1088xi8> to memref<768xi8>
// LOOPS-NEXT:    func.call @conv_without_bias_k2_convolution(%{{.*}}, %{{.*}}, %{{.*}}, %[[ZERO]], %[[S]])
