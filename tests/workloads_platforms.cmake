# Tests of workloads/ and platforms/ (pure: no SimGrid engine). Included from tests/CMakeLists.txt;
# paths are relative to tests/, test data lives in tests/testdata/wl_* and tests/testdata/pf_*.
dtsim_test(workloads/trace_reader_test.cpp dtsim::workloads)
dtsim_test(workloads/trace_roundtrip_test.cpp dtsim::workloads)
dtsim_test(workloads/parsing/units_test.cpp dtsim::parsing)
dtsim_test(platforms/platform_spec_test.cpp dtsim::platforms)
dtsim_test(workloads/parsing/json_fields_test.cpp dtsim::parsing)
dtsim_test(workloads/parsing/sha256_test.cpp dtsim::parsing)
