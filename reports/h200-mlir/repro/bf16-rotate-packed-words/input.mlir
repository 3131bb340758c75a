module attributes {gpu.container_module} {
  gpu.module @kernels attributes {spirv.target_env = #spirv.target_env<#spirv.vce<v1.6, [Shader, Float16, Float64, Int8, Int16, Int64, StorageBuffer16BitAccess, StorageBuffer8BitAccess, VulkanMemoryModel, GroupNonUniform, GroupNonUniformRotateKHR, CooperativeMatrixKHR], [SPV_KHR_16bit_storage, SPV_KHR_8bit_storage, SPV_KHR_vulkan_memory_model, SPV_KHR_subgroup_rotate, SPV_KHR_cooperative_matrix]>, #spirv.resource_limits<subgroup_size = 8, cooperative_matrix_properties_khr = [#spirv.coop_matrix_props_khr<m_size = 8, n_size = 8, k_size = 8, a_type = f16, b_type = f16, c_type = f16, result_type = f16, acc_sat = false, scope = <Subgroup>>, #spirv.coop_matrix_props_khr<m_size = 8, n_size = 8, k_size = 8, a_type = f16, b_type = f16, c_type = f32, result_type = f32, acc_sat = false, scope = <Subgroup>>, #spirv.coop_matrix_props_khr<m_size = 8, n_size = 8, k_size = 8, a_type = ui8, b_type = ui8, c_type = ui32, result_type = ui32, acc_sat = false, scope = <Subgroup>>, #spirv.coop_matrix_props_khr<m_size = 8, n_size = 8, k_size = 8, a_type = si8, b_type = si8, c_type = si32, result_type = si32, acc_sat = false, scope = <Subgroup>>]>>} {
    // mlir_mma[gpu_rotate-bf16-sg8-w8-off1]: gpu.rotate
    gpu.func @k_gpu_rotate_bf16_sg8_w8_off1(%IN: memref<16xbf16, #spirv.storage_class<StorageBuffer>>, %OUT: memref<16xbf16, #spirv.storage_class<StorageBuffer>>, %VALID: memref<16xi32, #spirv.storage_class<StorageBuffer>>) kernel attributes {spirv.entry_point_abi = #spirv.entry_point_abi<workgroup_size = [8, 1, 1]>} {
      %wg = gpu.block_id x
      %lane1 = gpu.lane_id
      %c3 = arith.constant 8 : index
      %base2 = arith.muli %wg, %c3 : index
      %i5 = arith.addi %base2, %lane1 : index
      %v4 = memref.load %IN[%i5] : memref<16xbf16, #spirv.storage_class<StorageBuffer>>
      %r6, %ok7 = gpu.rotate %v4, 1, 8 : bf16
      %i8 = arith.addi %base2, %lane1 : index
      memref.store %r6, %OUT[%i8] : memref<16xbf16, #spirv.storage_class<StorageBuffer>>
      %w9 = arith.extui %ok7 : i1 to i32
      %i10 = arith.addi %base2, %lane1 : index
      memref.store %w9, %VALID[%i10] : memref<16xi32, #spirv.storage_class<StorageBuffer>>
      gpu.return
    }
  }
}
