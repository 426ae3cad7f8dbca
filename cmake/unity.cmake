# Sources that compile alone in a unity build (PREFLIGHT_UNITY): each defines, in its anonymous namespace, a name that
# another source of the same module defines too, so the two cannot share a batch. Found by compiling every batch
# (-fsyntax-only). Renaming the clashing helper (or moving it to one shared header) takes a file off this list.
set(PREFLIGHT_UNITY_ALONE
    src/model/quant_variant.cpp        # a Json-pointer helper whose name another model source gives a Json& helper
    src/device/device_catalog.cpp      # squash()
    src/probe/host_bandwidth.cpp       # k_max_repeats (device_bandwidth.cpp)
    src/engine/quantization_methods.cpp  # contains(), vllm_family()
    src/logs/llama_cpp_log.cpp         # k_max_line_chars
    src/hub/metadata_cache.cpp         # env()
    src/plan/launch.cpp                # served_name()
)
set_source_files_properties(${PREFLIGHT_UNITY_ALONE} PROPERTIES SKIP_UNITY_BUILD_INCLUSION ON)
