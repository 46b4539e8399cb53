#include "source/elfsym.h"

#include <elf.h>
#include <errno.h>
#include <string.h>

/* Whether [off, off + n) lies in [0, len), without overflow. */
static int within(uint64_t off, uint64_t n, size_t len)
{
	return off <= len && n <= len - off;
}

/* The table of count entries of size each at off, or NULL where it is not in the
 * image or its entries are smaller than want. */
static const void *table(const unsigned char *elf, size_t len, uint64_t off, uint64_t each,
			 uint64_t count, size_t want)
{
	if (each < want || (count && each > UINT64_MAX / count) || !within(off, each * count, len))
		return NULL;
	return elf + off;
}

/* The file offset of the address addr inside the file bytes of an executable PT_LOAD
 * segment: 0 with *off, else -EINVAL. */
static int code_offset(const unsigned char *elf, size_t len, const Elf64_Ehdr *eh,
		       uint64_t addr, uint64_t *off)
{
	const unsigned char *ph = table(elf, len, eh->e_phoff, eh->e_phentsize, eh->e_phnum,
					sizeof(Elf64_Phdr));
	if (!ph)
		return -EINVAL;
	for (unsigned i = 0; i < eh->e_phnum; i++) {
		Elf64_Phdr p;
		memcpy(&p, ph + (size_t)i * eh->e_phentsize, sizeof(p));
		if (p.p_type != PT_LOAD || !(p.p_flags & PF_X) || !within(p.p_offset, p.p_filesz, len))
			continue;
		if (addr >= p.p_vaddr && addr - p.p_vaddr < p.p_filesz) {
			*off = addr - p.p_vaddr + p.p_offset;
			return 0;
		}
	}
	return -EINVAL;
}

int elf_func_offset(const void *image, size_t len, const char *name, uint64_t *off)
{
	const unsigned char *elf = image;
	Elf64_Ehdr eh;
	if (len < sizeof(eh))
		return -EINVAL;
	memcpy(&eh, elf, sizeof(eh));
	if (memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0 || eh.e_ident[EI_CLASS] != ELFCLASS64 ||
	    eh.e_ident[EI_DATA] != ELFDATA2LSB || eh.e_type != ET_DYN)
		return -EINVAL;
	const unsigned char *sh = table(elf, len, eh.e_shoff, eh.e_shentsize, eh.e_shnum,
					sizeof(Elf64_Shdr));
	if (!sh)
		return -EINVAL;
	size_t want = strlen(name);
	for (unsigned i = 0; i < eh.e_shnum; i++) {
		Elf64_Shdr s, strs;
		memcpy(&s, sh + (size_t)i * eh.e_shentsize, sizeof(s));
		if (s.sh_type != SHT_DYNSYM)
			continue;
		if (s.sh_link >= eh.e_shnum || s.sh_entsize < sizeof(Elf64_Sym))
			return -EINVAL;
		memcpy(&strs, sh + (size_t)s.sh_link * eh.e_shentsize, sizeof(strs));
		const char *names = table(elf, len, strs.sh_offset, 1, strs.sh_size, 1);
		const unsigned char *syms = table(elf, len, s.sh_offset, s.sh_entsize,
						  s.sh_size / s.sh_entsize, sizeof(Elf64_Sym));
		if (strs.sh_type != SHT_STRTAB || !names || !syms)
			return -EINVAL;
		for (uint64_t k = 0; k < s.sh_size / s.sh_entsize; k++) {
			Elf64_Sym sym;
			memcpy(&sym, syms + k * s.sh_entsize, sizeof(sym));
			int bind = ELF64_ST_BIND(sym.st_info);
			if (ELF64_ST_TYPE(sym.st_info) != STT_FUNC || sym.st_shndx == SHN_UNDEF ||
			    (bind != STB_GLOBAL && bind != STB_WEAK))
				continue;
			/* the name, to its end within the table */
			if (sym.st_name >= strs.sh_size || strs.sh_size - sym.st_name <= want ||
			    memcmp(names + sym.st_name, name, want + 1) != 0)
				continue;
			return code_offset(elf, len, &eh, sym.st_value, off);
		}
		return -ENOENT;
	}
	return -ENOENT;
}
