module attributes {gpu.container_module} {
  gpu.module @kernels attributes {spirv.target_env = #spirv.target_env<#spirv.vce<v1.6, [Shader, Float16, Float64, Int8, Int16, Int64, StorageBuffer16BitAccess, StorageBuffer8BitAccess, VulkanMemoryModel, GroupNonUniform, GroupNonUniformRotateKHR, CooperativeMatrixKHR], [SPV_KHR_16bit_storage, SPV_KHR_8bit_storage, SPV_KHR_vulkan_memory_model, SPV_KHR_subgroup_rotate, SPV_KHR_cooperative_matrix]>, #spirv.resource_limits<subgroup_size = 32, cooperative_matrix_properties_khr = [#spirv.coop_matrix_props_khr<m_size = 16, n_size = 16, k_size = 16, a_type = f16, b_type = f16, c_type = f16, result_type = f16, acc_sat = false, scope = <Subgroup>>, #spirv.coop_matrix_props_khr<m_size = 16, n_size = 8, k_size = 16, a_type = f16, b_type = f16, c_type = f16, result_type = f16, acc_sat = false, scope = <Subgroup>>, #spirv.coop_matrix_props_khr<m_size = 16, n_size = 8, k_size = 8, a_type = f16, b_type = f16, c_type = f16, result_type = f16, acc_sat = false, scope = <Subgroup>>, #spirv.coop_matrix_props_khr<m_size = 16, n_size = 16, k_size = 16, a_type = f16, b_type = f16, c_type = f32, result_type = f32, acc_sat = false, scope = <Subgroup>>, #spirv.coop_matrix_props_khr<m_size = 16, n_size = 8, k_size = 16, a_type = f16, b_type = f16, c_type = f32, result_type = f32, acc_sat = false, scope = <Subgroup>>, #spirv.coop_matrix_props_khr<m_size = 16, n_size = 8, k_size = 8, a_type = f16, b_type = f16, c_type = f32, result_type = f32, acc_sat = false, scope = <Subgroup>>, #spirv.coop_matrix_props_khr<m_size = 16, n_size = 16, k_size = 32, a_type = ui8, b_type = ui8, c_type = ui32, result_type = ui32, acc_sat = false, scope = <Subgroup>>, #spirv.coop_matrix_props_khr<m_size = 16, n_size = 16, k_size = 32, a_type = si8, b_type = si8, c_type = si32, result_type = si32, acc_sat = false, scope = <Subgroup>>, #spirv.coop_matrix_props_khr<m_size = 16, n_size = 8, k_size = 32, a_type = ui8, b_type = ui8, c_type = ui32, result_type = ui32, acc_sat = false, scope = <Subgroup>>, #spirv.coop_matrix_props_khr<m_size = 16, n_size = 8, k_size = 32, a_type = si8, b_type = si8, c_type = si32, result_type = si32, acc_sat = false, scope = <Subgroup>>]>>} {
    // mlir_mma[compute-f16_f16_f32-aN-bN-tight]: gpu.subgroup_mma_compute
    gpu.func @k_compute_f16_f16_f32_aN_bN_tight(%A: memref<576xf16, #spirv.storage_class<StorageBuffer>>, %B: memref<576xf16, #spirv.storage_class<StorageBuffer>>, %C: memref<576xf32, #spirv.storage_class<StorageBuffer>>, %D: memref<512xf32, #spirv.storage_class<StorageBuffer>>) kernel attributes {spirv.entry_point_abi = #spirv.entry_point_abi<workgroup_size = [32, 1, 1]>} {
      %wg = gpu.block_id x
      %lane1 = gpu.lane_id
      %c3 = arith.constant 288 : index
      %base2 = arith.muli %wg, %c3 : index
      %c5 = arith.constant 256 : index
      %base4 = arith.muli %wg, %c5 : index
      %a6 = gpu.subgroup_mma_load_matrix %A[%base2] {leadDimension = 16 : index} : memref<576xf16, #spirv.storage_class<StorageBuffer>> -> !gpu.mma_matrix<16x16xf16, "AOp">
      %b7 = gpu.subgroup_mma_load_matrix %B[%base2] {leadDimension = 16 : index} : memref<576xf16, #spirv.storage_class<StorageBuffer>> -> !gpu.mma_matrix<16x16xf16, "BOp">
      %c8 = gpu.subgroup_mma_load_matrix %C[%base2] {leadDimension = 16 : index} : memref<576xf32, #spirv.storage_class<StorageBuffer>> -> !gpu.mma_matrix<16x16xf32, "COp">
      %d9 = gpu.subgroup_mma_compute %a6, %b7, %c8 : !gpu.mma_matrix<16x16xf16, "AOp">, !gpu.mma_matrix<16x16xf16, "BOp"> -> !gpu.mma_matrix<16x16xf32, "COp">
      gpu.subgroup_mma_store_matrix %d9, %D[%base4] {leadDimension = 16 : index} : !gpu.mma_matrix<16x16xf32, "COp">, memref<512xf32, #spirv.storage_class<StorageBuffer>>
      gpu.return
    }
  }
}
