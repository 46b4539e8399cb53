/* Where an exported function of a shared library lies in its file, for a uprobe.
 *
 * The library is untrusted (a target's libcuda.so may be a file it wrote), and a uprobe
 * placed at the wrong byte crashes every process that runs over it: the offset is
 * given only for a function symbol of the dynamic symbol table whose address falls
 * inside the file bytes of an executable PT_LOAD segment, and every read is bounded by
 * the image's size. 64-bit little-endian ELF only (x86-64, arm64). Pure: no I/O. */
#ifndef RSSWATCH_SOURCE_ELFSYM_H
#define RSSWATCH_SOURCE_ELFSYM_H

#include <stddef.h>
#include <stdint.h>

/* The file offset of the global or weak function name defined in the ELF image
 * elf[0..len): 0 with *off; -ENOENT when the image exports no such function; -EINVAL
 * when the image is not one it reads, is malformed, or the function's address is
 * outside every executable segment's file bytes. */
int elf_func_offset(const void *elf, size_t len, const char *name, uint64_t *off);

#endif
