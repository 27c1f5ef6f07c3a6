/* pyembed: a program that embeds CPython (linked statically with
 * libpythonX.Y.a by python_embedded, which builds it with that version's
 * headers) and runs the Python file named by its argument.
 *
 * usage: pyembed FILE   (PYTHONHOME: the interpreter's prefix) */
#include <Python.h>
#include <stdio.h>

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: pyembed FILE\n");
		return 2;
	}
	FILE *f = fopen(argv[1], "r");
	if (!f) {
		perror(argv[1]);
		return 1;
	}
	Py_Initialize();
	int rc = PyRun_SimpleFile(f, argv[1]);
	fclose(f);
	Py_Finalize();
	return rc ? 1 : 0;
}
