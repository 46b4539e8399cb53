/* source/elfsym.c: where an exported function lies in a library's file, checked
 * against the loader's own answer, and refused for an image that lies. */
#include "testutil.h"

#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <limits.h>
#include <link.h>
#include <string.h>
#include <unistd.h>

#include "source/elfsym.h"

static char fake_cuda[PATH_MAX];

/* BUILD/tests/test_elfsym -> BUILD/fake/cuda/libcuda.so.1 */
static int find_fake(void)
{
	char exe[PATH_MAX];
	ssize_t k = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (k < 0)
		return -1;
	exe[k] = '\0';
	for (int i = 0; i < 2; i++) {
		char *s = strrchr(exe, '/');
		if (!s)
			return -1;
		*s = '\0';
	}
	if (snprintf(fake_cuda, sizeof(fake_cuda), "%.*s/fake/cuda/libcuda.so.1",
		     PATH_MAX - 64, exe) >= (int)sizeof(fake_cuda))
		return -1;
	return access(fake_cuda, R_OK);
}

/* The offset of each entry point holds the code the loader runs for it. */
static void test_offsets_are_the_code(void **state)
{
	(void)state;
	if (find_fake() < 0)
		skip();
	size_t len;
	char *img = fixture(fake_cuda, &len);
	void *h = dlopen(fake_cuda, RTLD_NOW | RTLD_LOCAL);
	assert_non_null(h);
	struct link_map *map = NULL;
	assert_int_equal(dlinfo(h, RTLD_DI_LINKMAP, &map), 0);
	static const char *const names[] = { "cuMemAlloc_v2", "cuMemFree_v2", "cuMemCreate",
					     "cuMemAllocPitch_v2", "cuInit" };
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		uint64_t off = 0;
		assert_int_equal(elf_func_offset(img, len, names[i], &off), 0);
		const unsigned char *code = dlsym(h, names[i]);
		assert_non_null(code);
		assert_true(off + 16 <= len);
		assert_memory_equal(img + off, code, 16);
	}
	uint64_t off;
	/* not exported; a prefix of an export's name; an export's name with more */
	assert_int_equal(elf_func_offset(img, len, "give", &off), -ENOENT);
	assert_int_equal(elf_func_offset(img, len, "cuMemAlloc", &off), -ENOENT);
	assert_int_equal(elf_func_offset(img, len, "cuMemAlloc_v2x", &off), -ENOENT);
	dlclose(h);
	free(img);
}

/* The dynamic symbol of name in img (a writable copy), or NULL. */
static Elf64_Sym *dynsym(char *img, const char *name)
{
	Elf64_Ehdr *eh = (Elf64_Ehdr *)img;
	Elf64_Shdr *sh = (Elf64_Shdr *)(img + eh->e_shoff);
	for (unsigned i = 0; i < eh->e_shnum; i++) {
		if (sh[i].sh_type != SHT_DYNSYM)
			continue;
		const char *names = img + sh[sh[i].sh_link].sh_offset;
		Elf64_Sym *syms = (Elf64_Sym *)(img + sh[i].sh_offset);
		for (size_t k = 0; k < sh[i].sh_size / sizeof(Elf64_Sym); k++)
			if (strcmp(names + syms[k].st_name, name) == 0)
				return &syms[k];
	}
	return NULL;
}

/* An image that points a function at data, past its end or at nothing is refused;
 * one cut short anywhere never reads past its end (the sanitizer build says so). */
static void test_lies_refused(void **state)
{
	(void)state;
	if (find_fake() < 0)
		skip();
	size_t len;
	char *img = fixture(fake_cuda, &len);
	uint64_t off, good;
	assert_int_equal(elf_func_offset(img, len, "cuMemAlloc_v2", &good), 0);
	Elf64_Sym *s = dynsym(img, "cuMemAlloc_v2");
	assert_non_null(s);
	Elf64_Addr was = s->st_value;
	s->st_value = 0;	/* the ELF header: a read-only segment, not code */
	assert_int_equal(elf_func_offset(img, len, "cuMemAlloc_v2", &off), -EINVAL);
	s->st_value = UINT64_MAX - 4;
	assert_int_equal(elf_func_offset(img, len, "cuMemAlloc_v2", &off), -EINVAL);
	s->st_value = was;
	s->st_info = ELF64_ST_INFO(STB_GLOBAL, STT_OBJECT);	/* data, not a function */
	assert_int_equal(elf_func_offset(img, len, "cuMemAlloc_v2", &off), -ENOENT);
	s->st_info = ELF64_ST_INFO(STB_LOCAL, STT_FUNC);	/* not exported */
	assert_int_equal(elf_func_offset(img, len, "cuMemAlloc_v2", &off), -ENOENT);
	s->st_info = ELF64_ST_INFO(STB_GLOBAL, STT_FUNC);
	s->st_name = 0xfffffff0u;	/* a name outside the string table */
	assert_int_equal(elf_func_offset(img, len, "cuMemAlloc_v2", &off), -ENOENT);
	/* cut short: every length up to the headers' end, and around the tables' */
	for (size_t cut = 0; cut < len; cut += cut < 8192 ? 1 : 997) {
		char *part = malloc(cut ? cut : 1);
		memcpy(part, img, cut);
		int r = elf_func_offset(part, cut, "cuMemFree_v2", &off);
		assert_true(r == -EINVAL || r == -ENOENT || (r == 0 && off < cut));
		free(part);
	}
	/* not ELF, 32-bit, big-endian, an executable */
	char bad[64];
	memset(bad, 0, sizeof(bad));
	assert_int_equal(elf_func_offset(bad, sizeof(bad), "x", &off), -EINVAL);
	free(img);
	img = fixture(fake_cuda, &len);
	img[EI_CLASS] = ELFCLASS32;
	assert_int_equal(elf_func_offset(img, len, "cuMemFree_v2", &off), -EINVAL);
	img[EI_CLASS] = ELFCLASS64;
	img[EI_DATA] = ELFDATA2MSB;
	assert_int_equal(elf_func_offset(img, len, "cuMemFree_v2", &off), -EINVAL);
	img[EI_DATA] = ELFDATA2LSB;
	((Elf64_Ehdr *)img)->e_type = ET_EXEC;
	assert_int_equal(elf_func_offset(img, len, "cuMemFree_v2", &off), -EINVAL);
	free(img);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_offsets_are_the_code),
		cmocka_unit_test(test_lies_refused),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
