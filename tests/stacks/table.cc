// A C++ program for t85-stacks: a std::vector made by pipeline::build_table.
#include <cstdio>
#include <cstdlib>
#include <unistd.h>
#include <vector>

namespace pipeline {
struct Table {
	std::vector<char> rows;
	explicit Table(size_t n) : rows(n, 1) {}
};
__attribute__((noinline)) Table *build_table(size_t n) { return new Table(n); }
}  // namespace pipeline

int main(int argc, char **argv)
{
	size_t mib = argc > 1 ? std::strtoul(argv[1], nullptr, 10) : 64;
	pipeline::Table *t = pipeline::build_table(mib << 20);
	usleep(50000);
	std::printf("%d\n", (int)t->rows[mib]);
	delete t;
	return 0;
}
