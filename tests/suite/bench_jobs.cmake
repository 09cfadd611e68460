# `egg-gen bench -j 3 --rows`: three ops side by side; every finished op's row is appended to the
# rows file, and the report keeps the order the ops were given in. -j 0 is refused.
#   cmake -DEGG_GEN=... -DPYTHON=... -DNVCC=... -DDATA=... -DWORK=... -DCACHE=... -P bench_jobs.cmake
set(_ops "${DATA}/examples/suite/ew_sigmoid.py" "${DATA}/examples/suite/ew_relu.py"
         "${DATA}/examples/suite/red_sum_full.py")
file(REMOVE_RECURSE "${WORK}")
set(_common --arch sm_90 --out "${WORK}" --python "${PYTHON}" --nvcc "${NVCC}" --no-verify
            --data-dir "${DATA}" --cache-dir "${CACHE}")
execute_process(COMMAND "${EGG_GEN}" bench ${_ops} ${_common} -j 0
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(rc EQUAL 0)
  message(FATAL_ERROR "bench -j 0 was accepted")
endif()
execute_process(COMMAND "${EGG_GEN}" bench ${_ops} ${_common} -j 3 --rows "${WORK}/rows.jsonl"
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "bench -j 3 failed (${rc}):\n${out}\n${err}")
endif()
file(STRINGS "${WORK}/rows.jsonl" _rows)
list(LENGTH _rows _n)
if(NOT _n EQUAL 3)
  message(FATAL_ERROR "rows.jsonl has ${_n} rows, not 3:\n${_rows}")
endif()
foreach(_op ew_sigmoid ew_relu red_sum_full)
  string(FIND "${_rows}" "\"op\":\"${_op}\"" _at)
  if(_at EQUAL -1)
    message(FATAL_ERROR "rows.jsonl has no row for ${_op}:\n${_rows}")
  endif()
endforeach()
file(READ "${WORK}/bench.json" _report)
string(JSON _first GET "${_report}" rows 0 op)
string(JSON _second GET "${_report}" rows 1 op)
string(JSON _third GET "${_report}" rows 2 op)
if(NOT "${_first};${_second};${_third}" STREQUAL "ew_sigmoid;ew_relu;red_sum_full")
  message(FATAL_ERROR "report rows out of the given order: ${_first};${_second};${_third}")
endif()
message(STATUS "bench -j: 3 rows, in order")
