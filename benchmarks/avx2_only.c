/* Preloaded by benchmarks/avx2_only.py: the process sees its CPU without AVX-512, AVX-VNNI
 * and AMX, so that LiteRT (XNNPACK's cpuinfo) and nnsim (LLVM's host features) both choose
 * their AVX2 code, as on an AVX2-only machine.
 *
 * Linux's CPUID faulting (arch_prctl ARCH_SET_CPUID 0; the CPU or hypervisor must offer it,
 * "cpuid_fault" in /proc/cpuinfo) makes every CPUID instruction of the process raise SIGSEGV;
 * the handler runs the real CPUID with faulting briefly off, clears the feature bits below,
 * and resumes after the instruction. Threads and children inherit the setting (children
 * started with exec load this library again through LD_PRELOAD). Any other SIGSEGV gets the
 * default action (the process dies as it would have).
 */
#define _GNU_SOURCE
#include <asm/prctl.h>
#include <cpuid.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <ucontext.h>
#include <unistd.h>

#define BIT(n) (1u << (n))

static int cpuid_faulting(int off) { return syscall(SYS_arch_prctl, ARCH_SET_CPUID, off); }

static void on_segv(int sig, siginfo_t *info, void *context)
{
    ucontext_t *uc = context;
    greg_t *r = uc->uc_mcontext.gregs;
    const unsigned char *ip = (const unsigned char *)r[REG_RIP];
    unsigned leaf, sub, a, b, c, d;

    (void)info;
    if (ip[0] != 0x0f || ip[1] != 0xa2) {   /* not CPUID: a real fault, die of it */
        signal(sig, SIG_DFL);
        return;
    }
    leaf = (unsigned)r[REG_RAX];
    sub = (unsigned)r[REG_RCX];
    cpuid_faulting(1);
    __cpuid_count(leaf, sub, a, b, c, d);
    cpuid_faulting(0);
    if (leaf == 7 && sub == 0) {
        /* AVX512 F, DQ, IFMA, PF, ER, CD, BW, VL */
        b &= ~(BIT(16) | BIT(17) | BIT(21) | BIT(26) | BIT(27) | BIT(28) | BIT(30) | BIT(31));
        /* AVX512 VBMI, VBMI2, VNNI, BITALG, VPOPCNTDQ */
        c &= ~(BIT(1) | BIT(6) | BIT(11) | BIT(12) | BIT(14));
        /* AVX512 4VNNIW, 4FMAPS, VP2INTERSECT, AMX-BF16, AVX512 FP16, AMX-TILE, AMX-INT8 */
        d &= ~(BIT(2) | BIT(3) | BIT(8) | BIT(22) | BIT(23) | BIT(24) | BIT(25));
    } else if (leaf == 7 && sub == 1) {
        /* AVX-VNNI, AVX512 BF16, AMX-FP16, AVX-IFMA */
        a &= ~(BIT(4) | BIT(5) | BIT(21) | BIT(23));
        /* AVX-VNNI-INT8, AVX-NE-CONVERT, AVX-VNNI-INT16 */
        d &= ~(BIT(4) | BIT(5) | BIT(10));
    }
    r[REG_RAX] = a;
    r[REG_RBX] = b;
    r[REG_RCX] = c;
    r[REG_RDX] = d;
    r[REG_RIP] += 2;
}

__attribute__((constructor)) static void avx2_only(void)
{
    struct sigaction sa = {0};

    sa.sa_sigaction = on_segv;
    sa.sa_flags = SA_SIGINFO;
    if (sigaction(SIGSEGV, &sa, NULL) != 0 || cpuid_faulting(0) != 0)
        abort();
}
