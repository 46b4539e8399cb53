/* A library t85-stacks's program opens with dlopen: its block is named by lib_alloc. */
#include <stdlib.h>
#include <string.h>

char *lib_alloc(size_t n);

__attribute__((noinline)) char *lib_alloc(size_t n)
{
	char *p = malloc(n);
	if (p)
		memset(p, 5, n);
	return p;
}
