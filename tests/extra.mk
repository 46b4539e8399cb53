# Fake NVML libraries (tests/fake/fake_nvml.c), one per driver variant, each named
# libnvidia-ml.so.1 in its own folder as the real one is. Point RSSWATCH_NVML_LIB at one.
FAKE_NVML := $(BUILD)/fake/libnvidia-ml.so.1 $(BUILD)/fake/noproc/libnvidia-ml.so.1 \
	$(BUILD)/fake/old/libnvidia-ml.so.1 $(BUILD)/fake/nomem/libnvidia-ml.so.1
TEST_EXTRA += $(FAKE_NVML)

fake_nvml_cmd = @mkdir -p $(@D) && echo "  FAKE    $@" && \
	$(CC) $(CPPFLAGS) $(ALL_CFLAGS) -fPIC -shared -Wl,-soname,libnvidia-ml.so.1 $(1) -o $@ $<

$(BUILD)/fake/libnvidia-ml.so.1: tests/fake/fake_nvml.c
	$(call fake_nvml_cmd,)
$(BUILD)/fake/noproc/libnvidia-ml.so.1: tests/fake/fake_nvml.c
	$(call fake_nvml_cmd,-DFAKE_NO_PROCESS_QUERY)
$(BUILD)/fake/old/libnvidia-ml.so.1: tests/fake/fake_nvml.c
	$(call fake_nvml_cmd,-DFAKE_OLD_DRIVER)
$(BUILD)/fake/nomem/libnvidia-ml.so.1: tests/fake/fake_nvml.c
	$(call fake_nvml_cmd,-DFAKE_NO_MEMORY_QUERY)

# The GPU unit tests and benchmark load the fakes at run time.
$(BUILD)/tests/test_nvml: | $(FAKE_NVML)
$(BUILD)/tests/test_sampler: | $(FAKE_NVML)
$(BUILD)/bench/bench_nvml: | $(FAKE_NVML)

# The stand-in CUDA driver (tests/fake/fake_cuda.c) in a folder of its own, beside a copy
# of the fake NVML: the recorder's GPU probes attach to the libcuda.so.1 in the folder it
# loaded NVML from, as on a real host. The other fakes' folders have no libcuda, so the
# tests that use them poll as without probes.
FAKE_CUDA := $(BUILD)/fake/cuda/libcuda.so.1 $(BUILD)/fake/cuda/libnvidia-ml.so.1
TEST_EXTRA += $(FAKE_CUDA)

$(BUILD)/fake/cuda/libnvidia-ml.so.1: tests/fake/fake_nvml.c
	$(call fake_nvml_cmd,)
# (without the sanitizer: the programs that load it, tests/bin's, are built without)
$(BUILD)/fake/cuda/libcuda.so.1: tests/fake/fake_cuda.c
	@mkdir -p $(@D) && echo "  FAKE    $@" && \
	$(CC) $(CPPFLAGS) -std=gnu11 $(WARN) $(CFLAGS) -fPIC -shared -Wl,-soname,libcuda.so.1 \
		-o $@ $<
$(BUILD)/tests/test_elfsym: | $(FAKE_CUDA)
