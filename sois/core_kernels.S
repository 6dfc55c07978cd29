/* core_kernels.S - issue-rate kernels of the int, fp and simd SoIs (SoI11, SoI12, SoI15).
 *
 * Each kernel is   uint64_t ib_<kind>_kernel(uint64_t iters)   (SysV: iters in %rdi, result in %rax), runs `iters`
 * iterations of a loop of independent chains (so the issue rate, not latency, limits it), touches no memory in the
 * loop, uses only caller-saved registers, and returns the number of instructions it executed (iters * instructions per
 * iteration, loop counter and branch included).  iters == 0 runs nothing and returns 0.
 * Every kernel lies between the global labels ib_<kind>_kernel and ib_<kind>_kernel_end so a test can disassemble
 * exactly that range. */

        .text

/* ---- int: 8 chains of add/xor with immediates on general-purpose registers: 16 ALU + dec + jnz = 18 ------- */
        .globl  ib_int_kernel
        .type   ib_int_kernel, @function
        .p2align 5
ib_int_kernel:
        mov     %rdi, %r11              /* result = iters * 18 (shifts and adds), kept in the red zone */
        shl     $4, %r11
        add     %rdi, %r11
        add     %rdi, %r11
        mov     %r11, -8(%rsp)
        test    %rdi, %rdi
        jz      2f
        xor     %eax, %eax
        xor     %ecx, %ecx
        xor     %edx, %edx
        xor     %esi, %esi
        xor     %r8d, %r8d
        xor     %r9d, %r9d
        xor     %r10d, %r10d
        xor     %r11d, %r11d
        .p2align 5
1:
        add     $1, %rax
        add     $3, %rcx
        add     $5, %rdx
        add     $7, %rsi
        add     $9, %r8
        add     $11, %r9
        add     $13, %r10
        add     $15, %r11
        xor     $0x55, %rax
        xor     $0x66, %rcx
        xor     $0x77, %rdx
        xor     $0x11, %rsi
        xor     $0x22, %r8
        xor     $0x33, %r9
        xor     $0x44, %r10
        xor     $0x5a, %r11
        dec     %rdi
        jnz     1b
2:
        mov     -8(%rsp), %rax
        ret
        .globl  ib_int_kernel_end
ib_int_kernel_end:
        .size   ib_int_kernel, ib_int_kernel_end - ib_int_kernel

/* ---- fp: 12 chains of scalar double addsd/mulsd (x = x * 1.0 + 0.0, no denormals): 24 FP + dec + jnz = 26 -- */
        .globl  ib_fp_kernel
        .type   ib_fp_kernel, @function
        .p2align 5
ib_fp_kernel:
        imul    $26, %rdi, %r11
        test    %rdi, %rdi
        jz      2f
        movabs  $0x3ff0000000000000, %rax      /* 1.0 */
        movq    %rax, %xmm14
        xor     %eax, %eax
        movq    %rax, %xmm15                    /* 0.0 */
        movq    %rax, %xmm0
        movq    %rax, %xmm1
        movq    %rax, %xmm2
        movq    %rax, %xmm3
        movq    %rax, %xmm4
        movq    %rax, %xmm5
        movq    %rax, %xmm6
        movq    %rax, %xmm7
        movq    %rax, %xmm8
        movq    %rax, %xmm9
        movq    %rax, %xmm10
        movq    %rax, %xmm11
        .p2align 5
1:
        addsd   %xmm15, %xmm0
        addsd   %xmm15, %xmm1
        addsd   %xmm15, %xmm2
        addsd   %xmm15, %xmm3
        addsd   %xmm15, %xmm4
        addsd   %xmm15, %xmm5
        addsd   %xmm15, %xmm6
        addsd   %xmm15, %xmm7
        addsd   %xmm15, %xmm8
        addsd   %xmm15, %xmm9
        addsd   %xmm15, %xmm10
        addsd   %xmm15, %xmm11
        mulsd   %xmm14, %xmm0
        mulsd   %xmm14, %xmm1
        mulsd   %xmm14, %xmm2
        mulsd   %xmm14, %xmm3
        mulsd   %xmm14, %xmm4
        mulsd   %xmm14, %xmm5
        mulsd   %xmm14, %xmm6
        mulsd   %xmm14, %xmm7
        mulsd   %xmm14, %xmm8
        mulsd   %xmm14, %xmm9
        mulsd   %xmm14, %xmm10
        mulsd   %xmm14, %xmm11
        dec     %rdi
        jnz     1b
2:
        mov     %r11, %rax
        ret
        .globl  ib_fp_kernel_end
ib_fp_kernel_end:
        .size   ib_fp_kernel, ib_fp_kernel_end - ib_fp_kernel

/* ---- simd, AVX-512F: 12 chains of vfmadd231pd zmm (x += 1.0 * 0.0): 12 FMA + dec + jnz = 14 --------------- */
        .globl  ib_simd_avx512_kernel
        .type   ib_simd_avx512_kernel, @function
        .p2align 5
ib_simd_avx512_kernel:
        imul    $14, %rdi, %r11
        test    %rdi, %rdi
        jz      2f
        movabs  $0x3ff0000000000000, %rax
        movq    %rax, %xmm14
        vbroadcastsd %xmm14, %zmm14
        vpxorq  %zmm15, %zmm15, %zmm15
        vmovapd %zmm14, %zmm0
        vmovapd %zmm14, %zmm1
        vmovapd %zmm14, %zmm2
        vmovapd %zmm14, %zmm3
        vmovapd %zmm14, %zmm4
        vmovapd %zmm14, %zmm5
        vmovapd %zmm14, %zmm6
        vmovapd %zmm14, %zmm7
        vmovapd %zmm14, %zmm8
        vmovapd %zmm14, %zmm9
        vmovapd %zmm14, %zmm10
        vmovapd %zmm14, %zmm11
        .p2align 5
1:
        vfmadd231pd %zmm15, %zmm14, %zmm0
        vfmadd231pd %zmm15, %zmm14, %zmm1
        vfmadd231pd %zmm15, %zmm14, %zmm2
        vfmadd231pd %zmm15, %zmm14, %zmm3
        vfmadd231pd %zmm15, %zmm14, %zmm4
        vfmadd231pd %zmm15, %zmm14, %zmm5
        vfmadd231pd %zmm15, %zmm14, %zmm6
        vfmadd231pd %zmm15, %zmm14, %zmm7
        vfmadd231pd %zmm15, %zmm14, %zmm8
        vfmadd231pd %zmm15, %zmm14, %zmm9
        vfmadd231pd %zmm15, %zmm14, %zmm10
        vfmadd231pd %zmm15, %zmm14, %zmm11
        dec     %rdi
        jnz     1b
        vzeroupper
2:
        mov     %r11, %rax
        ret
        .globl  ib_simd_avx512_kernel_end
ib_simd_avx512_kernel_end:
        .size   ib_simd_avx512_kernel, ib_simd_avx512_kernel_end - ib_simd_avx512_kernel

/* ---- simd, AVX2 + FMA: 12 chains of vfmadd231pd ymm: 12 FMA + dec + jnz = 14 ------------------------------- */
        .globl  ib_simd_avx2_kernel
        .type   ib_simd_avx2_kernel, @function
        .p2align 5
ib_simd_avx2_kernel:
        imul    $14, %rdi, %r11
        test    %rdi, %rdi
        jz      2f
        movabs  $0x3ff0000000000000, %rax
        vmovq   %rax, %xmm14
        vbroadcastsd %xmm14, %ymm14
        vxorpd  %ymm15, %ymm15, %ymm15
        vmovapd %ymm14, %ymm0
        vmovapd %ymm14, %ymm1
        vmovapd %ymm14, %ymm2
        vmovapd %ymm14, %ymm3
        vmovapd %ymm14, %ymm4
        vmovapd %ymm14, %ymm5
        vmovapd %ymm14, %ymm6
        vmovapd %ymm14, %ymm7
        vmovapd %ymm14, %ymm8
        vmovapd %ymm14, %ymm9
        vmovapd %ymm14, %ymm10
        vmovapd %ymm14, %ymm11
        .p2align 5
1:
        vfmadd231pd %ymm15, %ymm14, %ymm0
        vfmadd231pd %ymm15, %ymm14, %ymm1
        vfmadd231pd %ymm15, %ymm14, %ymm2
        vfmadd231pd %ymm15, %ymm14, %ymm3
        vfmadd231pd %ymm15, %ymm14, %ymm4
        vfmadd231pd %ymm15, %ymm14, %ymm5
        vfmadd231pd %ymm15, %ymm14, %ymm6
        vfmadd231pd %ymm15, %ymm14, %ymm7
        vfmadd231pd %ymm15, %ymm14, %ymm8
        vfmadd231pd %ymm15, %ymm14, %ymm9
        vfmadd231pd %ymm15, %ymm14, %ymm10
        vfmadd231pd %ymm15, %ymm14, %ymm11
        dec     %rdi
        jnz     1b
        vzeroupper
2:
        mov     %r11, %rax
        ret
        .globl  ib_simd_avx2_kernel_end
ib_simd_avx2_kernel_end:
        .size   ib_simd_avx2_kernel, ib_simd_avx2_kernel_end - ib_simd_avx2_kernel

/* ---- simd, SSE2: 12 chains of packed addpd/mulpd on xmm (x = x * 1.0 + 0.0): 24 + dec + jnz = 26 --------- */
        .globl  ib_simd_sse_kernel
        .type   ib_simd_sse_kernel, @function
        .p2align 5
ib_simd_sse_kernel:
        imul    $26, %rdi, %r11
        test    %rdi, %rdi
        jz      2f
        movabs  $0x3ff0000000000000, %rax
        movq    %rax, %xmm14
        unpcklpd %xmm14, %xmm14                 /* {1.0, 1.0} */
        xorpd   %xmm15, %xmm15
        movapd  %xmm14, %xmm0
        movapd  %xmm14, %xmm1
        movapd  %xmm14, %xmm2
        movapd  %xmm14, %xmm3
        movapd  %xmm14, %xmm4
        movapd  %xmm14, %xmm5
        movapd  %xmm14, %xmm6
        movapd  %xmm14, %xmm7
        movapd  %xmm14, %xmm8
        movapd  %xmm14, %xmm9
        movapd  %xmm14, %xmm10
        movapd  %xmm14, %xmm11
        .p2align 5
1:
        addpd   %xmm15, %xmm0
        addpd   %xmm15, %xmm1
        addpd   %xmm15, %xmm2
        addpd   %xmm15, %xmm3
        addpd   %xmm15, %xmm4
        addpd   %xmm15, %xmm5
        addpd   %xmm15, %xmm6
        addpd   %xmm15, %xmm7
        addpd   %xmm15, %xmm8
        addpd   %xmm15, %xmm9
        addpd   %xmm15, %xmm10
        addpd   %xmm15, %xmm11
        mulpd   %xmm14, %xmm0
        mulpd   %xmm14, %xmm1
        mulpd   %xmm14, %xmm2
        mulpd   %xmm14, %xmm3
        mulpd   %xmm14, %xmm4
        mulpd   %xmm14, %xmm5
        mulpd   %xmm14, %xmm6
        mulpd   %xmm14, %xmm7
        mulpd   %xmm14, %xmm8
        mulpd   %xmm14, %xmm9
        mulpd   %xmm14, %xmm10
        mulpd   %xmm14, %xmm11
        dec     %rdi
        jnz     1b
2:
        mov     %r11, %rax
        ret
        .globl  ib_simd_sse_kernel_end
ib_simd_sse_kernel_end:
        .size   ib_simd_sse_kernel, ib_simd_sse_kernel_end - ib_simd_sse_kernel

        .section .note.GNU-stack,"",@progbits
