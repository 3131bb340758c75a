//! cts-provides: cl_intel_subgroup_matrix_multiply_accumulate
//! cts-provides: cl_intel_subgroup_matrix_multiply_accumulate_tf32
//! cts-provides: cl_intel_subgroup_split_matrix_multiply_accumulate
/*
 * Layered implementation of the Intel subgroup matrix multiply-accumulate
 * built-ins (subgroup-matrix CTS, `--opencl-prelude builtin`).  Written from
 * the rules of cl_intel_subgroup_matrix_multiply_accumulate, its _tf32
 * companion and cl_intel_subgroup_split_matrix_multiply_accumulate:
 *
 *  packing  N = subgroup size (8 or 16), M = components of a/acc, K from the
 *           name.  Work-item n holds column n of B and of acc/result;
 *           A row m is spread over the subgroup: for N <= K work-item j holds
 *           columns j*(K/N) .. j*(K/N)+K/N-1 of row m in component m, the
 *           lower column in the lower bits.  B dword d of work-item n holds
 *           rows d*(32/bits) .. of column n, the lower row in the lower bits.
 *  sample   the extension's coding sample: broadcast a's word j from work-item j and add
 *           the dot product to a running sum that starts at acc (k ascending).
 *  tf32     _tf32 (N = 16 > K = 8): component c of work-item i is row
 *           2c + i/8, column i%8; only the 10 upper mantissa bits take part.
 *           intel_convert_tfloat32*: round to nearest even.
 *  split    sub-groups 2p and 2p+1 of a work-group pair up (which two pair
 *           is the implementation's choice: the split extension's Issues, the
 *           first); 2p passes rows 0..M/2-1 and 2p+1 rows M/2..M-1 of A; exchanged through local memory
 *           and a barrier.
 *
 * Needs sub_group_broadcast (cl_khr_subgroups / OpenCL C 3.0 subgroups);
 * the fp16-accumulator overloads need cl_khr_fp16.  Integer sums wrap to 32
 * bits; float sums are formed in float (products of fp16/bf16/tf32 values are
 * exact in float), fp16/bf16 results rounded once to nearest even.
 *
 * Split form contract with the kernel: this prelude defines
 * CTS_SPLIT_SCRATCH_WORDS; a kernel calling a split built-in then declares
 * `__local uint cts_split_scratch[CTS_SPLIT_SCRATCH_WORDS]` at kernel scope
 * (OpenCL C allows __local variables only there) and uses work-groups of an
 * even number of subgroups of 8, at most 8 subgroups.
 */
#ifdef cl_khr_fp16
#pragma OPENCL EXTENSION cl_khr_fp16 : enable
#endif

#define CTS_DEF static inline __attribute__((overloadable))

/* ---- element decoding (data carried in integer types: cl_intel_subgroup_matrix_
 * multiply_accumulate, Modifications to the OpenCL C Specification) ---- */
static inline int cts_sx(uint v, uint bits) {
    const uint m = 1u << (bits - 1u);
    v &= (m << 1) - 1u;
    return (int)(v ^ m) - (int)m;
}
static inline int cts_ux(uint v, uint bits) { return (int)(v & ((1u << bits) - 1u)); }

static inline float cts_f16(uint h) {
    h &= 0xFFFFu;
    const uint s = (h & 0x8000u) << 16, e = (h >> 10) & 0x1Fu, m = h & 0x3FFu;
    if (e == 0u) {
        const float v = (float)m * 0x1.0p-24f; /* subnormal: exact */
        return as_float(as_uint(v) | s);
    }
    if (e == 31u) return as_float(s | 0x7F800000u | (m << 13));
    return as_float(s | ((e + 112u) << 23) | (m << 13));
}
static inline float cts_bf16(uint h) { return as_float((h & 0xFFFFu) << 16); }
static inline float cts_tf32(uint u) { return as_float(u & 0xFFFFE000u); }

/* float -> bf16 bits, round to nearest even; NaN stays NaN */
static inline ushort cts_to_bf16(float x) {
    const uint u = as_uint(x);
    if ((u & 0x7FFFFFFFu) > 0x7F800000u) return (ushort)((u >> 16) | 0x40u);
    return (ushort)((u + 0x7FFFu + ((u >> 16) & 1u)) >> 16);
}

/* float -> tf32 (still a float), round to nearest even; inf kept, NaN quiet */
static inline float cts_tf32_rne(float x) {
    const uint u = as_uint(x);
    if ((u & 0x7F800000u) == 0x7F800000u)
        return as_float((u & 0x7FFFFFu) ? ((u | 0x400000u) & 0xFFFFE000u) : u);
    return as_float((u + 0x0FFFu + ((u >> 13) & 1u)) & 0xFFFFE000u);
}

/* this work-item's A word, zero-extended */
CTS_DEF uint cts_aw(int x) { return as_uint(x); }
CTS_DEF uint cts_aw(uint x) { return x; }
CTS_DEF uint cts_aw(short x) { return (uint)as_ushort(x); }
CTS_DEF uint cts_aw(ushort x) { return (uint)x; }

/* ---- one row of A (word aw of this work-item) times this work-item's column
 *      of B, plus acc.  N <= K: word j of the row comes from work-item j. ---- */
#define CTS_INT_ROW(RA, N, K, AB, BB, AX, BX)                                              \
    static inline int RA(uint aw, uint8 bv, int acc) {                                     \
        uint bw[8];                                                                        \
        vstore8(bv, 0, bw);                                                                \
        uint sum = as_uint(acc);                                                           \
        __attribute__((opencl_unroll_hint(1))) for (uint j = 0; j < (N); ++j) {                                                 \
            const uint w = sub_group_broadcast(aw, j);                                     \
            for (uint t = 0; t < (K) / (N); ++t) {                                         \
                const uint k = j * ((K) / (N)) + t;                                        \
                const int x = AX(w >> (t * (AB)), AB);                                     \
                const int y = BX(bw[k / (32 / (BB))] >> ((k % (32 / (BB))) * (BB)), BB);  \
                sum += (uint)(x * y);                                                      \
            }                                                                              \
        }                                                                                  \
        return as_int(sum);                                                                \
    }

#define CTS_FLT_ROW(RA, N, DEC)                                                            \
    static inline float RA(uint aw, uint8 bv, float acc) {                                 \
        uint bw[8];                                                                        \
        vstore8(bv, 0, bw);                                                                \
        float sum = acc;                                                                   \
        __attribute__((opencl_unroll_hint(1))) for (uint j = 0; j < (N); ++j) {                                                 \
            const uint w = sub_group_broadcast(aw, j);                                     \
            for (uint t = 0; t < 16u / (N); ++t) {                                         \
                const uint k = j * (16u / (N)) + t;                                        \
                sum += DEC(w >> (16u * t)) * DEC(bw[k / 2u] >> (16u * (k % 2u)));          \
            }                                                                              \
        }                                                                                  \
        return sum;                                                                        \
    }

/* public overloads M = 1, 2, 4, 8: one row at a time (rows in a loop keep the
 * program small; every work-item runs the same trip count, so the broadcasts
 * stay in uniform control flow) */
#define CTS_PUBLIC_M(NAME, ATY, BTY, RTY, RA, M)                                           \
    CTS_DEF RTY##M NAME(ATY##M a, BTY b, RTY##M acc) {                                     \
        ATY av[M];                                                                         \
        RTY ac[M], r[M];                                                                   \
        vstore##M(a, 0, av);                                                               \
        vstore##M(acc, 0, ac);                                                             \
        __attribute__((opencl_unroll_hint(1))) for (uint m = 0; m < (M); ++m)              \
            r[m] = RA(cts_aw(av[m]), as_uint8(b), ac[m]);                                  \
        return vload##M(0, r);                                                             \
    }
#define CTS_PUBLIC(NAME, ATY, BTY, RTY, RA)                                                \
    CTS_DEF RTY NAME(ATY a, BTY b, RTY acc) { return RA(cts_aw(a), as_uint8(b), acc); }   \
    CTS_PUBLIC_M(NAME, ATY, BTY, RTY, RA, 2)                                               \
    CTS_PUBLIC_M(NAME, ATY, BTY, RTY, RA, 4)                                               \
    CTS_PUBLIC_M(NAME, ATY, BTY, RTY, RA, 8)

/*            row fn               N   K  A bits B bits  A sign   B sign */
CTS_INT_ROW(cts_ra_i8_i8_n8,       8, 32, 8, 8, cts_sx, cts_sx)
CTS_INT_ROW(cts_ra_i8_u8_n8,       8, 32, 8, 8, cts_sx, cts_ux)
CTS_INT_ROW(cts_ra_u8_i8_n8,       8, 32, 8, 8, cts_ux, cts_sx)
CTS_INT_ROW(cts_ra_u8_u8_n8,       8, 32, 8, 8, cts_ux, cts_ux)
CTS_INT_ROW(cts_ra_i4_i4_n8,       8, 64, 4, 4, cts_sx, cts_sx)
CTS_INT_ROW(cts_ra_i4_u4_n8,       8, 64, 4, 4, cts_sx, cts_ux)
CTS_INT_ROW(cts_ra_u4_i4_n8,       8, 64, 4, 4, cts_ux, cts_sx)
CTS_INT_ROW(cts_ra_u4_u4_n8,       8, 64, 4, 4, cts_ux, cts_ux)
CTS_INT_ROW(cts_ra_i8_i8_n16,     16, 32, 8, 8, cts_sx, cts_sx)
CTS_INT_ROW(cts_ra_i8_u8_n16,     16, 32, 8, 8, cts_sx, cts_ux)
CTS_INT_ROW(cts_ra_u8_i8_n16,     16, 32, 8, 8, cts_ux, cts_sx)
CTS_INT_ROW(cts_ra_u8_u8_n16,     16, 32, 8, 8, cts_ux, cts_ux)
CTS_INT_ROW(cts_ra_i4_i4_n16,     16, 64, 4, 4, cts_sx, cts_sx)
CTS_INT_ROW(cts_ra_i4_u4_n16,     16, 64, 4, 4, cts_sx, cts_ux)
CTS_INT_ROW(cts_ra_u4_i4_n16,     16, 64, 4, 4, cts_ux, cts_sx)
CTS_INT_ROW(cts_ra_u4_u4_n16,     16, 64, 4, 4, cts_ux, cts_ux)
CTS_FLT_ROW(cts_ra_bf16_n8,        8, cts_bf16)
CTS_FLT_ROW(cts_ra_f16_n8,         8, cts_f16)
CTS_FLT_ROW(cts_ra_bf16_n16,      16, cts_bf16)
CTS_FLT_ROW(cts_ra_f16_n16,       16, cts_f16)

/* bf16 accumulator (carried in short) and fp16 accumulator: one rounding */
static inline short cts_ra_bf16acc_n16(uint aw, uint8 bv, short acc) {
    return as_short(cts_to_bf16(cts_ra_bf16_n16(aw, bv, cts_bf16((uint)as_ushort(acc)))));
}
#ifdef cl_khr_fp16
static inline half cts_ra_f16acc_n16(uint aw, uint8 bv, half acc) {
    return convert_half_rte(cts_ra_f16_n16(aw, bv, convert_float(acc)));
}
#endif

#ifndef cl_intel_subgroup_matrix_multiply_accumulate
/* cl_intel_subgroup_matrix_multiply_accumulate, New OpenCL C Functions, N = 8 (a: int/uint per row) */
CTS_PUBLIC(intel_sub_group_i8_i8_matrix_mad_k32, int, int8, int, cts_ra_i8_i8_n8)
CTS_PUBLIC(intel_sub_group_i8_u8_matrix_mad_k32, int, uint8, int, cts_ra_i8_u8_n8)
CTS_PUBLIC(intel_sub_group_u8_i8_matrix_mad_k32, uint, int8, int, cts_ra_u8_i8_n8)
CTS_PUBLIC(intel_sub_group_u8_u8_matrix_mad_k32, uint, uint8, int, cts_ra_u8_u8_n8)
CTS_PUBLIC(intel_sub_group_i4_i4_matrix_mad_k64, int, int8, int, cts_ra_i4_i4_n8)
CTS_PUBLIC(intel_sub_group_i4_u4_matrix_mad_k64, int, uint8, int, cts_ra_i4_u4_n8)
CTS_PUBLIC(intel_sub_group_u4_i4_matrix_mad_k64, uint, int8, int, cts_ra_u4_i4_n8)
CTS_PUBLIC(intel_sub_group_u4_u4_matrix_mad_k64, uint, uint8, int, cts_ra_u4_u4_n8)
CTS_PUBLIC(intel_sub_group_bf16_bf16_matrix_mad_k16, int, int8, float, cts_ra_bf16_n8)
CTS_PUBLIC(intel_sub_group_f16_f16_matrix_mad_k16, int, int8, float, cts_ra_f16_n8)
/* cl_intel_subgroup_matrix_multiply_accumulate, New OpenCL C Functions, N = 16 (a: short/ushort per row) */
CTS_PUBLIC(intel_sub_group_i8_i8_matrix_mad_k32, short, int8, int, cts_ra_i8_i8_n16)
CTS_PUBLIC(intel_sub_group_i8_u8_matrix_mad_k32, short, uint8, int, cts_ra_i8_u8_n16)
CTS_PUBLIC(intel_sub_group_u8_i8_matrix_mad_k32, ushort, int8, int, cts_ra_u8_i8_n16)
CTS_PUBLIC(intel_sub_group_u8_u8_matrix_mad_k32, ushort, uint8, int, cts_ra_u8_u8_n16)
CTS_PUBLIC(intel_sub_group_i4_i4_matrix_mad_k64, short, int8, int, cts_ra_i4_i4_n16)
CTS_PUBLIC(intel_sub_group_i4_u4_matrix_mad_k64, short, uint8, int, cts_ra_i4_u4_n16)
CTS_PUBLIC(intel_sub_group_u4_i4_matrix_mad_k64, ushort, int8, int, cts_ra_u4_i4_n16)
CTS_PUBLIC(intel_sub_group_u4_u4_matrix_mad_k64, ushort, uint8, int, cts_ra_u4_u4_n16)
CTS_PUBLIC(intel_sub_group_bf16_bf16_matrix_mad_k16, short, int8, float, cts_ra_bf16_n16)
CTS_PUBLIC(intel_sub_group_f16_f16_matrix_mad_k16, short, int8, float, cts_ra_f16_n16)
CTS_PUBLIC(intel_sub_group_bf16_bf16_matrix_mad_k16, short, int8, short, cts_ra_bf16acc_n16)
#ifdef cl_khr_fp16
CTS_PUBLIC(intel_sub_group_f16_f16_matrix_mad_k16, short, int8, half, cts_ra_f16acc_n16)
#endif
#endif /* cl_intel_subgroup_matrix_multiply_accumulate */

#ifndef cl_intel_subgroup_matrix_multiply_accumulate_tf32
/* cl_intel_subgroup_matrix_multiply_accumulate_tf32: row m = 2c + p comes from
 * component c of work-items 8p .. 8p+7 */
static inline float cts_tf32_row(float ac, uint p, float8 bv, float acc) {
    float bw[8];
    vstore8(bv, 0, bw);
    const uint a = as_uint(ac);
    float sum = acc;
    for (uint k = 0; k < 8u; ++k)
        sum += cts_tf32(sub_group_broadcast(a, 8u * p + k)) * cts_tf32(as_uint(bw[k]));
    return sum;
}
CTS_DEF float intel_sub_group_tf32_tf32_matrix_mad_k8(float a, float8 b, float acc) {
    return cts_tf32_row(a, 0u, b, acc);
}
CTS_DEF float2 intel_sub_group_tf32_tf32_matrix_mad_k8(float a, float8 b, float2 acc) {
    return (float2)(cts_tf32_row(a, 0u, b, acc.s0), cts_tf32_row(a, 1u, b, acc.s1));
}
CTS_DEF float4 intel_sub_group_tf32_tf32_matrix_mad_k8(float2 a, float8 b, float4 acc) {
    return (float4)(intel_sub_group_tf32_tf32_matrix_mad_k8(a.s0, b, acc.lo),
                    intel_sub_group_tf32_tf32_matrix_mad_k8(a.s1, b, acc.hi));
}
CTS_DEF float8 intel_sub_group_tf32_tf32_matrix_mad_k8(float4 a, float8 b, float8 acc) {
    return (float8)(intel_sub_group_tf32_tf32_matrix_mad_k8(a.lo, b, acc.lo),
                    intel_sub_group_tf32_tf32_matrix_mad_k8(a.hi, b, acc.hi));
}
static inline float intel_convert_tfloat32_as_float(float x) { return cts_tf32_rne(x); }
static inline float2 intel_convert_tfloat322_as_float2(float2 x) {
    return (float2)(cts_tf32_rne(x.s0), cts_tf32_rne(x.s1));
}
static inline float3 intel_convert_tfloat323_as_float3(float3 x) {
    return (float3)(cts_tf32_rne(x.s0), cts_tf32_rne(x.s1), cts_tf32_rne(x.s2));
}
static inline float4 intel_convert_tfloat324_as_float4(float4 x) {
    return (float4)(intel_convert_tfloat322_as_float2(x.lo), intel_convert_tfloat322_as_float2(x.hi));
}
static inline float8 intel_convert_tfloat328_as_float8(float8 x) {
    return (float8)(intel_convert_tfloat324_as_float4(x.lo), intel_convert_tfloat324_as_float4(x.hi));
}
static inline float16 intel_convert_tfloat3216_as_float16(float16 x) {
    return (float16)(intel_convert_tfloat328_as_float8(x.lo), intel_convert_tfloat328_as_float8(x.hi));
}
#endif /* cl_intel_subgroup_matrix_multiply_accumulate_tf32 */

#ifndef cl_intel_subgroup_split_matrix_multiply_accumulate
/* cl_intel_subgroup_split_matrix_multiply_accumulate: N = 8, M = 2, 4, 8; a holds
 * M/2 rows.  Each work-item puts its a words into local memory; after the barrier it takes, for every row m, the
 * word that the same lane of sub-group (its pair's first) + m / (M/2) holds,
 * so the broadcasts of the base row function see the full A.  A second barrier
 * frees the scratch. */
#define CTS_SPLIT_SCRATCH_WORDS 256 /* 8 subgroups x 8 lanes x up to 4 words */

CTS_DEF void cts_put(__local uint *s, uint i, uint a) { s[i] = a; }
CTS_DEF void cts_put(__local uint *s, uint i, uint2 a) { s[i] = a.s0; s[i + 1u] = a.s1; }
CTS_DEF void cts_put(__local uint *s, uint i, uint4 a) { vstore4(a, 0, s + i); }

#define CTS_SPLIT_ONE(IMPL, ATYV, AUV, H, RTY, M, BTY, RA)                                 \
    CTS_DEF RTY##M IMPL(ATYV a, BTY b, RTY##M acc, __local uint *scr) {                    \
        const uint lane = get_sub_group_local_id();                                        \
        cts_put(scr, (get_sub_group_id() * 8u + lane) * 4u, AUV(a));                       \
        barrier(CLK_LOCAL_MEM_FENCE);                                                      \
        uint w[M];                                                                         \
        const uint pair0 = get_sub_group_id() & ~1u;                                       \
        for (uint m = 0; m < (M); ++m)                                                     \
            w[m] = scr[((pair0 + m / (H)) * 8u + lane) * 4u + m % (H)];                    \
        barrier(CLK_LOCAL_MEM_FENCE);                                                      \
        RTY ac[M], r[M];                                                                   \
        vstore##M(acc, 0, ac);                                                             \
        __attribute__((opencl_unroll_hint(1))) for (uint m = 0; m < (M); ++m)              \
            r[m] = RA(w[m], as_uint8(b), ac[m]);                                           \
        return vload##M(0, r);                                                             \
    }
#define CTS_SPLIT(IMPL, ATY, BTY, RTY, RA)                                                 \
    CTS_SPLIT_ONE(IMPL, ATY, as_uint, 1, RTY, 2, BTY, RA)                                  \
    CTS_SPLIT_ONE(IMPL, ATY##2, as_uint2, 2, RTY, 4, BTY, RA)                              \
    CTS_SPLIT_ONE(IMPL, ATY##4, as_uint4, 4, RTY, 8, BTY, RA)

CTS_SPLIT(cts_split_i8_i8, int, int8, int, cts_ra_i8_i8_n8)
CTS_SPLIT(cts_split_i8_u8, int, uint8, int, cts_ra_i8_u8_n8)
CTS_SPLIT(cts_split_u8_i8, uint, int8, int, cts_ra_u8_i8_n8)
CTS_SPLIT(cts_split_u8_u8, uint, uint8, int, cts_ra_u8_u8_n8)
CTS_SPLIT(cts_split_bf16, int, int8, float, cts_ra_bf16_n8)
CTS_SPLIT(cts_split_f16, int, int8, float, cts_ra_f16_n8)

#define intel_sub_group_i8_i8_split_matrix_mad_k32(a, b, acc) cts_split_i8_i8(a, b, acc, cts_split_scratch)
#define intel_sub_group_i8_u8_split_matrix_mad_k32(a, b, acc) cts_split_i8_u8(a, b, acc, cts_split_scratch)
#define intel_sub_group_u8_i8_split_matrix_mad_k32(a, b, acc) cts_split_u8_i8(a, b, acc, cts_split_scratch)
#define intel_sub_group_u8_u8_split_matrix_mad_k32(a, b, acc) cts_split_u8_u8(a, b, acc, cts_split_scratch)
#define intel_sub_group_bf16_bf16_split_matrix_mad_k16(a, b, acc) cts_split_bf16(a, b, acc, cts_split_scratch)
#define intel_sub_group_f16_f16_split_matrix_mad_k16(a, b, acc) cts_split_f16(a, b, acc, cts_split_scratch)
#endif /* cl_intel_subgroup_split_matrix_multiply_accumulate */
