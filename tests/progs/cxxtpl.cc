// cxxtpl: C++ names. The CPU goes to ns::Type<int>::method (a template
// member function) called from ns::drive<ns::Type<int>>, so a profile must
// show the demangled, namespace- and template-qualified names.
//
// usage: cxxtpl [SECONDS]   (default: run until killed)
// Prints "ready PID" on stdout once running.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <unistd.h>

namespace ns {

template <typename T> struct Type {
	T seed;
	__attribute__((noinline)) T method(T x)
	{
		for (unsigned i = 0; i < 300000u; i++) {
			x = x * 1103515245 + seed;
			__asm__ volatile("" : "+r"(x));
		}
		return x;
	}
};

template <typename W> __attribute__((noinline)) int drive(W &w, int x)
{
	int r = w.method(x);
	__asm__ volatile("" : "+r"(r));
	return r + 1;
}

} // namespace ns

int main(int argc, char **argv)
{
	double seconds = argc > 1 ? std::atof(argv[1]) : 0;
	auto t0 = std::chrono::steady_clock::now();
	std::printf("ready %d\n", (int)getpid());
	std::fflush(stdout);
	ns::Type<int> w{12345};
	int acc = 1;
	for (;;) {
		acc = ns::drive(w, acc);
		std::chrono::duration<double> d = std::chrono::steady_clock::now() - t0;
		if (seconds > 0 && d.count() >= seconds)
			break;
	}
	return acc == 42 ? 1 : 0;
}
