module attributes {gpu.container_module} {
  gpu.module @kernels [#nvvm.target<chip = "sm_90">] {
    // mlir_mma[elementwise-subf-f16]: gpu.subgroup_mma_elementwise subf
    gpu.func @k_elementwise_subf_f16(%X0: memref<512xf16>, %X1: memref<512xf16>, %D: memref<512xf16>) kernel attributes {known_block_size = array<i32: 32, 1, 1>} {
      %wg = gpu.block_id x
      %lane1 = gpu.lane_id
      %c3 = arith.constant 256 : index
      %base2 = arith.muli %wg, %c3 : index
      %x04 = gpu.subgroup_mma_load_matrix %X0[%base2] {leadDimension = 16 : index} : memref<512xf16> -> !gpu.mma_matrix<16x16xf16, "COp">
      %x15 = gpu.subgroup_mma_load_matrix %X1[%base2] {leadDimension = 16 : index} : memref<512xf16> -> !gpu.mma_matrix<16x16xf16, "COp">
      %r6 = gpu.subgroup_mma_elementwise subf %x04, %x15 : (!gpu.mma_matrix<16x16xf16, "COp">, !gpu.mma_matrix<16x16xf16, "COp">) -> !gpu.mma_matrix<16x16xf16, "COp">
      gpu.subgroup_mma_store_matrix %r6, %D[%base2] {leadDimension = 16 : index} : !gpu.mma_matrix<16x16xf16, "COp">, memref<512xf16>
      gpu.return
    }
  }
}
