/* churn: creates and joins many short-lived threads.
 *
 * usage: churn [TOTAL] [BATCH]   (default 5000 threads, 8 at a time)
 * Each thread spins briefly in short_thread_work. Prints "ready PID" first
 * and "done N" (threads created and joined) at the end; exits 0 when every
 * thread handed back its own argument. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

__attribute__((noinline)) static unsigned long short_thread_work(unsigned long x)
{
	for (unsigned i = 0; i < 200000u; i++) {
		x = x * 6364136223846793005ul + 1;
		__asm__ volatile("" : "+r"(x));
	}
	return x;
}

__attribute__((noinline)) static void *thread_main(void *arg)
{
	unsigned long r = short_thread_work((unsigned long)arg);
	__asm__ volatile("" : "+r"(r));
	/* Give back the argument: the joiner checks it came through intact. */
	return (void *)((unsigned long)arg + (r & 0));
}

int main(int argc, char **argv)
{
	long total = argc > 1 ? atol(argv[1]) : 5000;
	int batch = argc > 2 ? atoi(argv[2]) : 8;
	if (batch < 1 || batch > 256)
		batch = 8;
	printf("ready %d\n", (int)getpid());
	fflush(stdout);
	long done = 0, wrong = 0;
	pthread_t tid[256];
	while (done < total) {
		int k = 0;
		for (; k < batch && done + k < total; k++)
			if (pthread_create(&tid[k], NULL, thread_main, (void *)(done + k)) != 0) {
				perror("pthread_create");
				return 1;
			}
		for (int j = 0; j < k; j++) {
			void *ret;
			pthread_join(tid[j], &ret);
			if ((unsigned long)ret != (unsigned long)(done + j))
				wrong++;
		}
		done += k;
	}
	printf("done %ld wrong %ld\n", done, wrong);
	return wrong ? 1 : 0;
}
