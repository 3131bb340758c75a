module attributes {gpu.container_module} {
  gpu.module @kernels [#nvvm.target<chip = "sm_90">] {
    // mlir_mma[load_store-f16-padded-loadN-storeN]: gpu.subgroup_mma_load_matrix / store_matrix
    gpu.func @k_load_store_f16_padded_loadN_storeN(%src: memref<720xf16>, %dst: memref<756xf16>) kernel attributes {known_block_size = array<i32: 32, 1, 1>} {
      %wg = gpu.block_id x
      %lane1 = gpu.lane_id
      %c3 = arith.constant 360 : index
      %base2 = arith.muli %wg, %c3 : index
      %c5 = arith.constant 378 : index
      %base4 = arith.muli %wg, %c5 : index
      %c7 = arith.constant 21 : index
      %i6 = arith.addi %base2, %c7 : index
      %m8 = gpu.subgroup_mma_load_matrix %src[%i6] {leadDimension = 19 : index} : memref<720xf16> -> !gpu.mma_matrix<16x16xf16, "COp">
      %c10 = arith.constant 39 : index
      %i9 = arith.addi %base4, %c10 : index
      gpu.subgroup_mma_store_matrix %m8, %dst[%i9] {leadDimension = 19 : index} : !gpu.mma_matrix<16x16xf16, "COp">, memref<756xf16>
      gpu.return
    }
  }
}
