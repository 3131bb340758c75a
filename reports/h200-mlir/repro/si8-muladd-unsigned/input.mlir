module attributes {gpu.container_module} {
  gpu.module @kernels attributes {spirv.target_env = #spirv.target_env<#spirv.vce<v1.6, [Shader, Float16, Float64, Int8, Int16, Int64, StorageBuffer16BitAccess, StorageBuffer8BitAccess, VulkanMemoryModel, GroupNonUniform, GroupNonUniformRotateKHR, CooperativeMatrixKHR], [SPV_KHR_16bit_storage, SPV_KHR_8bit_storage, SPV_KHR_vulkan_memory_model, SPV_KHR_subgroup_rotate, SPV_KHR_cooperative_matrix]>, #spirv.resource_limits<subgroup_size = 32, cooperative_matrix_properties_khr = [#spirv.coop_matrix_props_khr<m_size = 16, n_size = 16, k_size = 16, a_type = f16, b_type = f16, c_type = f16, result_type = f16, acc_sat = false, scope = <Subgroup>>, #spirv.coop_matrix_props_khr<m_size = 16, n_size = 8, k_size = 16, a_type = f16, b_type = f16, c_type = f16, result_type = f16, acc_sat = false, scope = <Subgroup>>, #spirv.coop_matrix_props_khr<m_size = 16, n_size = 8, k_size = 8, a_type = f16, b_type = f16, c_type = f16, result_type = f16, acc_sat = false, scope = <Subgroup>>, #spirv.coop_matrix_props_khr<m_size = 16, n_size = 16, k_size = 16, a_type = f16, b_type = f16, c_type = f32, result_type = f32, acc_sat = false, scope = <Subgroup>>, #spirv.coop_matrix_props_khr<m_size = 16, n_size = 8, k_size = 16, a_type = f16, b_type = f16, c_type = f32, result_type = f32, acc_sat = false, scope = <Subgroup>>, #spirv.coop_matrix_props_khr<m_size = 16, n_size = 8, k_size = 8, a_type = f16, b_type = f16, c_type = f32, result_type = f32, acc_sat = false, scope = <Subgroup>>, #spirv.coop_matrix_props_khr<m_size = 16, n_size = 16, k_size = 32, a_type = ui8, b_type = ui8, c_type = ui32, result_type = ui32, acc_sat = false, scope = <Subgroup>>, #spirv.coop_matrix_props_khr<m_size = 16, n_size = 16, k_size = 32, a_type = si8, b_type = si8, c_type = si32, result_type = si32, acc_sat = false, scope = <Subgroup>>, #spirv.coop_matrix_props_khr<m_size = 16, n_size = 8, k_size = 32, a_type = ui8, b_type = ui8, c_type = ui32, result_type = ui32, acc_sat = false, scope = <Subgroup>>, #spirv.coop_matrix_props_khr<m_size = 16, n_size = 8, k_size = 32, a_type = si8, b_type = si8, c_type = si32, result_type = si32, acc_sat = false, scope = <Subgroup>>]>>} {
    // mlir_mma[compute-si8_si8_i32-aN-bN-tight-m16n16k32]: gpu.subgroup_mma_compute
    gpu.func @k_compute_si8_si8_i32_aN_bN_tight_m16n16k32(%A: memref<1152xi8, #spirv.storage_class<StorageBuffer>>, %B: memref<1088xi8, #spirv.storage_class<StorageBuffer>>, %C: memref<576xi32, #spirv.storage_class<StorageBuffer>>, %D: memref<512xi32, #spirv.storage_class<StorageBuffer>>) kernel attributes {spirv.entry_point_abi = #spirv.entry_point_abi<workgroup_size = [32, 1, 1]>} {
      %wg = gpu.block_id x
      %lane1 = gpu.lane_id
      %c3 = arith.constant 576 : index
      %base2 = arith.muli %wg, %c3 : index
      %c5 = arith.constant 544 : index
      %base4 = arith.muli %wg, %c5 : index
      %c7 = arith.constant 288 : index
      %base6 = arith.muli %wg, %c7 : index
      %c9 = arith.constant 256 : index
      %base8 = arith.muli %wg, %c9 : index
      %a10 = gpu.subgroup_mma_load_matrix %A[%base2] {leadDimension = 32 : index} : memref<1152xi8, #spirv.storage_class<StorageBuffer>> -> !gpu.mma_matrix<16x32xsi8, "AOp">
      %b11 = gpu.subgroup_mma_load_matrix %B[%base4] {leadDimension = 16 : index} : memref<1088xi8, #spirv.storage_class<StorageBuffer>> -> !gpu.mma_matrix<32x16xsi8, "BOp">
      %c12 = gpu.subgroup_mma_load_matrix %C[%base6] {leadDimension = 16 : index} : memref<576xi32, #spirv.storage_class<StorageBuffer>> -> !gpu.mma_matrix<16x16xi32, "COp">
      %d13 = gpu.subgroup_mma_compute %a10, %b11, %c12 : !gpu.mma_matrix<16x32xsi8, "AOp">, !gpu.mma_matrix<32x16xsi8, "BOp"> -> !gpu.mma_matrix<16x16xi32, "COp">
      gpu.subgroup_mma_store_matrix %d13, %D[%base8] {leadDimension = 16 : index} : !gpu.mma_matrix<16x16xi32, "COp">, memref<512xi32, #spirv.storage_class<StorageBuffer>>
      gpu.return
    }
  }
}
