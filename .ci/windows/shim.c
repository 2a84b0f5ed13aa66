/* bcryptprimitives.dll for Wine 8, which lacks it: Rust's std (1.78 and later) imports
 * ProcessPrng from it for its random seeds. Filled from advapi32's RtlGenRandom
 * (exported as SystemFunction036), which Wine has, in chunks of at most 2 GiB (it takes
 * a ULONG). Windows' own ProcessPrng never fails; this one fails only if RtlGenRandom does. */
#include <windows.h>

BOOLEAN WINAPI SystemFunction036(PVOID buffer, ULONG length);

__declspec(dllexport) BOOL WINAPI ProcessPrng(PBYTE p, SIZE_T n)
{
    while (n > 0) {
        ULONG chunk = n > 0x80000000u ? 0x80000000u : (ULONG)n;
        if (!SystemFunction036(p, chunk))
            return FALSE;
        p += chunk;
        n -= chunk;
    }
    return TRUE;
}
