module attributes {gpu.container_module} {
  gpu.module @kernels [#nvvm.target<chip = "sm_90">] {
    // mlir_mma[constant-AOp-si8]: gpu.subgroup_mma_constant_matrix
    gpu.func @k_constant_AOp_si8(%K: memref<2xsi8>, %D: memref<512xi32>, %SEL: memref<512xi8>) kernel attributes {known_block_size = array<i32: 32, 1, 1>} {
      %wg = gpu.block_id x
      %lane1 = gpu.lane_id
      %c3 = arith.constant 1 : index
      %base2 = arith.muli %wg, %c3 : index
      %c5 = arith.constant 256 : index
      %base4 = arith.muli %wg, %c5 : index
      %k6 = memref.load %K[%base2] : memref<2xsi8>
      %m7 = gpu.subgroup_mma_constant_matrix %k6 : !gpu.mma_matrix<16x16xsi8, "AOp">
      %_zero8 = gpu.subgroup_mma_load_matrix %D[%base4] {leadDimension = 16 : index} : memref<512xi32> -> !gpu.mma_matrix<16x16xi32, "COp">
      %_sel9 = gpu.subgroup_mma_load_matrix %SEL[%base4] {leadDimension = 16 : index} : memref<512xi8> -> !gpu.mma_matrix<16x16xsi8, "BOp">
      %_obs10 = gpu.subgroup_mma_compute %m7, %_sel9, %_zero8 : !gpu.mma_matrix<16x16xsi8, "AOp">, !gpu.mma_matrix<16x16xsi8, "BOp"> -> !gpu.mma_matrix<16x16xi32, "COp">
      gpu.subgroup_mma_store_matrix %_obs10, %D[%base4] {leadDimension = 16 : index} : !gpu.mma_matrix<16x16xi32, "COp">, memref<512xi32>
      gpu.return
    }
  }
}
