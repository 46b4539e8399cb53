/* The uprobes on the CUDA driver's entry points (source/cudaprobe.c attaches them), as
 * the programs that read each one's arguments, for a BPF program that defines
 *   gpu_begin(__u64 out, __u64 size, __u64 pitch, __u32 kind): an allocation begins;
 *     out is where the driver writes the block (or handle), pitch (0: none) where
 *     cuMemAllocPitch_v2 writes a row's bytes, size then the rows;
 *   gpu_drop(__u64 block, __u32 kind): a free, at its entry;
 * kind KP_GPU_PTR or KP_GPU_HANDLE (bpf/kpeak.h). Included once, after both. */
#ifndef RSSWATCH_BPF_CUDA_ENTRIES_H
#define RSSWATCH_BPF_CUDA_ENTRIES_H

/* cuMemAlloc_v2, cuMemAllocManaged, cuMemAllocAsync, cuMemAllocFromPoolAsync:
 * (CUdeviceptr *dptr, size_t bytesize, ...) */
SEC("uprobe")
int BPF_KPROBE(gpu_alloc_in, void *dptr, __u64 size)
{
	return gpu_begin((__u64)dptr, size, 0, KP_GPU_PTR);
}

/* cuMemAllocPitch_v2: (CUdeviceptr *dptr, size_t *pitch, size_t width, size_t height,
 * unsigned element_size); the block is pitch * height bytes. */
SEC("uprobe")
int BPF_KPROBE(gpu_pitch_in, void *dptr, void *pitch, __u64 width, __u64 height)
{
	(void)width;
	return gpu_begin((__u64)dptr, height, (__u64)pitch, KP_GPU_PTR);
}

/* cuMemCreate: (CUmemGenericAllocationHandle *handle, size_t size, prop, flags): the
 * physical memory of the virtual memory management API. */
SEC("uprobe")
int BPF_KPROBE(gpu_create_in, void *handle, __u64 size)
{
	return gpu_begin((__u64)handle, size, 0, KP_GPU_HANDLE);
}

/* cuMemFree_v2, cuMemFreeAsync: (CUdeviceptr dptr, ...) */
SEC("uprobe")
int BPF_KPROBE(gpu_free_in, __u64 dptr)
{
	return gpu_drop(dptr, KP_GPU_PTR);
}

/* cuMemRelease: (CUmemGenericAllocationHandle handle) */
SEC("uprobe")
int BPF_KPROBE(gpu_release_in, __u64 handle)
{
	return gpu_drop(handle, KP_GPU_HANDLE);
}

#endif
