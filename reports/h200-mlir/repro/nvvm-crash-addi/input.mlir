module attributes {gpu.container_module} {
  gpu.module @kernels [#nvvm.target<chip = "sm_90">] {
    // mlir_mma[elementwise-addi-i32]: gpu.subgroup_mma_elementwise addi
    gpu.func @k_elementwise_addi_i32(%X0: memref<512xi32>, %X1: memref<512xi32>, %D: memref<512xi32>) kernel attributes {known_block_size = array<i32: 32, 1, 1>} {
      %wg = gpu.block_id x
      %lane1 = gpu.lane_id
      %c3 = arith.constant 256 : index
      %base2 = arith.muli %wg, %c3 : index
      %x04 = gpu.subgroup_mma_load_matrix %X0[%base2] {leadDimension = 16 : index} : memref<512xi32> -> !gpu.mma_matrix<16x16xi32, "COp">
      %x15 = gpu.subgroup_mma_load_matrix %X1[%base2] {leadDimension = 16 : index} : memref<512xi32> -> !gpu.mma_matrix<16x16xi32, "COp">
      %r6 = gpu.subgroup_mma_elementwise addi %x04, %x15 : (!gpu.mma_matrix<16x16xi32, "COp">, !gpu.mma_matrix<16x16xi32, "COp">) -> !gpu.mma_matrix<16x16xi32, "COp">
      gpu.subgroup_mma_store_matrix %r6, %D[%base2] {leadDimension = 16 : index} : !gpu.mma_matrix<16x16xi32, "COp">, memref<512xi32>
      gpu.return
    }
  }
}
