# The gpu test of the suite: every op.py of examples/suite generated and verified on this machine's
# GPU (`egg-gen bench -j --no-baseline`: candidates are timed to pick the winner, PyTorch is not;
# speed is the benchmark's, tools/gpu_suite.sh); fails unless every op is verified. Without a GPU it reports
# SKIP (the test's SKIP_REGULAR_EXPRESSION).
#   cmake -DEGG_GEN=... -DPYTHON=... -DNVCC=... -DDATA=... -DWORK=... -DJOBS=... -P gpu_verify.cmake
find_program(_smi nvidia-smi)
if(_smi)
  execute_process(COMMAND "${_smi}" -L RESULT_VARIABLE _rc OUTPUT_VARIABLE _gpus ERROR_QUIET)
endif()
if(NOT _smi OR NOT _rc EQUAL 0 OR NOT _gpus MATCHES "GPU")
  message("SKIP: no CUDA device (nvidia-smi -L lists none); the suite is verified where there is one")
  return()
endif()
execute_process(COMMAND nvidia-smi --query-gpu=compute_cap --format=csv,noheader
                OUTPUT_VARIABLE _cc OUTPUT_STRIP_TRAILING_WHITESPACE)
string(REGEX REPLACE "\n.*" "" _cc "${_cc}")
string(REPLACE "." "" _cc "${_cc}")
file(REMOVE_RECURSE "${WORK}")
execute_process(COMMAND "${EGG_GEN}" bench "${DATA}/examples/suite" --arch sm_${_cc} --out "${WORK}"
                        --python "${PYTHON}" --nvcc "${NVCC}" --data-dir "${DATA}" --no-cache
                        --no-strict --no-baseline -j ${JOBS} --rows "${WORK}/rows.jsonl"
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
message("${out}")
if(NOT EXISTS "${WORK}/bench.json")
  message(FATAL_ERROR "egg-gen bench wrote no report (exit ${rc}):\n${err}")
endif()
file(READ "${WORK}/bench.json" _report)
string(JSON _ops GET "${_report}" summary ops)
string(JSON _verified GET "${_report}" summary verified)
if(NOT rc EQUAL 0 OR NOT _ops EQUAL _verified)
  message(FATAL_ERROR "${_verified} of ${_ops} suite ops verified (egg-gen exit ${rc}); rows in "
                      "${WORK}/rows.jsonl\n${err}")
endif()
message(STATUS "suite: all ${_ops} ops verified on sm_${_cc}")
