/* plugin: the shared library dlopener loads, burns CPU in, and unloads.
 * plugin_spin is only ever reached through dlsym. */
#define NOINLINE __attribute__((noinline, noclone))

NOINLINE unsigned long long plugin_leaf(unsigned long long x)
{
	for (unsigned i = 0; i < 300000u; i++) {
		x = x * 6364136223846793005ull + 99;
		__asm__ volatile("" : "+r"(x));
	}
	return x;
}

unsigned long long plugin_spin(unsigned long long x);
unsigned long long plugin_spin(unsigned long long x)
{
	unsigned long long r = plugin_leaf(x + 1);
	__asm__ volatile("" : "+r"(r));
	return r ^ 3;
}
