/* swaplib: the library swaplibs loads twice over, built as libalpha.so
 * (SWAP_NAME alpha) and libbravo.so (bravo): the same code, so each loads
 * where the other was unloaded, under other names. Each has a function
 * never called (4 KiB of code): last in alpha, first in bravo
 * (SWAP_PAD_FIRST), so that the two are of one size but their functions
 * sit at other offsets: an address of alpha_leaf named by bravo's file is
 * bravo_padding. */
#define NOINLINE __attribute__((noinline, noclone))
#define CAT2(a, b) a##_##b
#define CAT(a, b) CAT2(a, b)
#define LEAF CAT(SWAP_NAME, leaf)
#define HOT CAT(SWAP_NAME, hot)

#define PADDING CAT(SWAP_NAME, padding)
#define PADDING_CODE                                                         \
	unsigned long long PADDING(unsigned long long x);                    \
	NOINLINE unsigned long long PADDING(unsigned long long x)            \
	{                                                                    \
		__asm__ volatile(".fill 4096, 1, 0x90" : "+r"(x));           \
		return x;                                                    \
	}

#ifdef SWAP_PAD_FIRST
PADDING_CODE
#endif

NOINLINE unsigned long long LEAF(unsigned long long x)
{
	for (unsigned i = 0; i < 100000u; i++) {
		x = x * 6364136223846793005ull + 99;
		__asm__ volatile("" : "+r"(x));
	}
	return x;
}

unsigned long long HOT(unsigned long long x, unsigned rounds);
unsigned long long HOT(unsigned long long x, unsigned rounds)
{
	for (unsigned k = 0; k < rounds; k++)
		x = LEAF(x + 1);
	return x;
}

#ifndef SWAP_PAD_FIRST
PADDING_CODE
#endif
