// cxxlambda: C++ frames whose DWARF has no linkage name. The CPU goes to a
// lambda called through std::function from app::Worker::run; GCC inlines
// std::function's _M_invoke, std::__invoke_r and std::__invoke_impl, whose
// abstract instances (like the lambda's operator()) carry only a bare
// DW_AT_name, so a profile must qualify them from their scopes:
// std::_Function_handler<...>::_M_invoke, main::{lambda}::operator().
//
// usage: cxxlambda [SECONDS]   (default: run until killed)
// Prints "ready PID" on stdout once running.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <unistd.h>

namespace app {

struct Worker {
	unsigned long long seed = 1;
	__attribute__((noinline)) void run(const std::function<unsigned long long(unsigned long long)> &f,
					   double seconds)
	{
		auto end = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
		while (std::chrono::steady_clock::now() < end)
			seed = f(seed);
	}
};

} // namespace app

int main(int argc, char **argv)
{
	double seconds = argc > 1 ? atof(argv[1]) : 1e9;
	unsigned k = 7;
	std::printf("ready %d\n", (int)getpid());
	std::fflush(stdout);
	app::Worker w;
	w.run([k](unsigned long long x) {
		for (int i = 0; i < 100000; i++) {
			x = x * 6364136223846793005ull + k;
			__asm__ volatile("" : "+r"(x));
		}
		return x;
	}, seconds);
	std::printf("%llu\n", w.seed);
	return 0;
}
