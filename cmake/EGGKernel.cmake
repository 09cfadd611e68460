# egg_kernel(): generate a verified CUDA kernel from a PyTorch reference (op.py) at build time.
#
#   egg_kernel(<target> <op.py>
#              ARCH <sm_XX> [<sm_YY> ...]
#              [NAME <name>]              # default: op.py's stem, made a C identifier
#              [BACKEND <backend>]        # builtin (default), openai, anthropic, replay
#              [MODEL <model>]
#              [OPTIONS <k=v> ...]        # passed as --option k=v
#              [TOLERANCE <atol> <rtol>]  # passed as --tolerance <atol> <rtol>
#              [PRECISION <p>]            # passed as --option precision=<p> (e.g. tf32)
#              [VENDOR_DIR <dir>])        # checked-in kernels: <dir>/<name>/ (see "Vendoring")
#
# One custom command per kernel writes, under ${CMAKE_CURRENT_BINARY_DIR}/egg/<name>/:
#   <name>.cu, include/egg/<name>.h, manifest.json, <name>.d (depfile)
# The .cu is added to <target>, include/ goes on its include path, CUDA_ARCHITECTURES gets the
# ARCH values, the CUDA runtime is linked, and EGG_WITH_LIBTORCH=1 is defined when <target> links
# LibTorch (`torch`), which enables the header's forward(torch::Tensor...) wrapper.
#
# Cache variables:
#   EGG_REQUIRE_VERIFIED  fail the build when a kernel cannot be verified (no GPU, ...)
#   EGG_REQUIRE_FASTER    fail the build when a kernel is slower than PyTorch eager beyond the 3 %
#                         timing noise (measured on the GPU at generation; the warning is always
#                         in the build log and the manifest's vs_eager)
#   EGG_CACHE_DIR         generation cache folder (default: egg-gen's, ${XDG_CACHE_HOME:-~/.cache}/egg)
#   EGG_REMOTE_CACHE      shared cache base URL (GET/PUT <url>/ac/<key>: nginx WebDAV, bazel-remote
#                         with AC validation off, any object store behind HTTP)
#   EGG_REMOTE_CACHE_READ_ONLY  read the shared cache but never upload (CI)
#                         (the team's signing key EGG_REMOTE_CACHE_KEY and the upload token
#                         EGG_REMOTE_CACHE_TOKEN come from the build's environment, never from a
#                         cache variable: docs/remote-cache.md)
#   EGG_VERBOSE           print each kernel's generator command at configure time and make egg-gen
#                         verbose (EGG_LOG=debug in its environment)
#   EGG_LIVE_PROGRESS     show each generation's progress lines as they come under Ninja, which
#                         otherwise holds a command's output until it ends (USES_TERMINAL: the
#                         console pool, so one generation at a time); Makefiles always stream
#   EGG_VENDOR_MODE       for kernels with VENDOR_DIR: "use" (default) compiles the checked-in
#                         <dir>/<name>/<name>.cu with no generation (no GPU, LLM, network or Python
#                         needed); "check" generates as usual and fails the build, with a diff and
#                         the update command, when the checked-in copy differs.
#
# Vendoring: every kernel with VENDOR_DIR gets a target egg_vendor_update_<name>, and the project a
# target egg_vendor_update, that (re)generate the kernel straight into <dir>/<name>/ (.cu, header,
# manifest); commit that folder. Release builds then compile it as it is.
#
# The policies below are fixed here, so a project's older cmake_minimum_required() cannot change
# how egg_kernel() behaves (CMake records policies when a function is defined).

include_guard(GLOBAL)
cmake_policy(PUSH)
cmake_policy(VERSION 3.25)

option(EGG_REQUIRE_VERIFIED "egg_kernel(): fail when a generated kernel cannot be verified" OFF)
option(EGG_REQUIRE_FASTER "egg_kernel(): fail when a generated kernel is slower than PyTorch eager" OFF)
set(EGG_CACHE_DIR "" CACHE PATH "egg_kernel(): EGG generation cache folder (empty: egg-gen's default)")
option(EGG_VERBOSE "egg_kernel(): show generator commands and verbose generator output" OFF)
option(EGG_LIVE_PROGRESS
       "egg_kernel(): progress lines as they come under Ninja (one generation at a time)" OFF)
set(EGG_REMOTE_CACHE "" CACHE STRING
    "egg_kernel(): shared cache base URL (GET/PUT <url>/ac/<key>); empty: egg-gen's $EGG_REMOTE_CACHE")
option(EGG_REMOTE_CACHE_READ_ONLY "egg_kernel(): read the shared cache, never upload (CI)" OFF)
set(EGG_VENDOR_MODE "use" CACHE STRING
    "egg_kernel() VENDOR_DIR: use (compile the checked-in kernels) or check (regenerate and compare)")
set_property(CACHE EGG_VENDOR_MODE PROPERTY STRINGS use check)

set(_EGG_KERNEL_LIST_DIR "${CMAKE_CURRENT_LIST_DIR}")

# C++ keywords that cannot name a namespace.
set(_EGG_CXX_KEYWORDS
  alignas alignof and and_eq asm auto bitand bitor bool break case catch char char8_t char16_t
  char32_t class compl concept const consteval constexpr constinit const_cast continue co_await
  co_return co_yield decltype default delete do double dynamic_cast else enum explicit export extern
  false float for friend goto if inline int long mutable namespace new noexcept not not_eq nullptr
  operator or or_eq private protected public register reinterpret_cast requires return short signed
  sizeof static static_assert static_cast struct switch template this thread_local throw true try
  typedef typeid typename union unsigned using virtual void volatile wchar_t while xor xor_eq)

function(_egg_fail)
  string(JOIN "" _msg ${ARGN})
  message(FATAL_ERROR "egg_kernel(): ${_msg}")
endfunction()

# The data EGG's generator reads (templates, prompts, the Python frontend).
function(_egg_data_dir outvar)
  if(EGG_DATA_DIR)
    set(_d "${EGG_DATA_DIR}")
  elseif(EGG_SOURCE_DATA_DIR)
    set(_d "${EGG_SOURCE_DATA_DIR}")  # inside EGG's own build
  else()
    get_filename_component(_d "${_EGG_KERNEL_LIST_DIR}/.." ABSOLUTE)
  endif()
  set(${outvar} "${_d}" PARENT_SCOPE)
endfunction()

# Every file the generator reads from the data dir; cached per data dir for the configure run.
function(_egg_data_files datadir outvar)
  string(MAKE_C_IDENTIFIER "${datadir}" _id)
  get_property(_have GLOBAL PROPERTY "_EGG_DATA_FILES_${_id}" SET)
  if(NOT _have)
    file(GLOB_RECURSE _files LIST_DIRECTORIES false
         "${datadir}/templates/*" "${datadir}/prompts/*" "${datadir}/python/egg_frontend/*")
    list(FILTER _files EXCLUDE REGEX "/__pycache__/|\\.py[co]$|/\\.[^/]*$")
    list(SORT _files)
    set_property(GLOBAL PROPERTY "_EGG_DATA_FILES_${_id}" "${_files}")
  endif()
  get_property(_files GLOBAL PROPERTY "_EGG_DATA_FILES_${_id}")
  set(${outvar} "${_files}" PARENT_SCOPE)
endfunction()

# cuDNN for the conv family's cuDNN structure (found once per configure): EGG_CUDNN_ROOT if set
# ("none" keeps cuDNN out: egg-gen then never picks it and nothing links it), else the CUDA
# toolkit's, else the one PyTorch's wheel ships (Python package nvidia.cudnn). Sets <root_var> and
# <lib_var> (empty when there is none).
function(_egg_find_cudnn python root_var lib_var)
  get_property(_done GLOBAL PROPERTY EGG_CUDNN_DONE_)
  if(_done)
    get_property(_root GLOBAL PROPERTY EGG_CUDNN_ROOT_)
    get_property(_lib GLOBAL PROPERTY EGG_CUDNN_LIB_)
    set(${root_var} "${_root}" PARENT_SCOPE)
    set(${lib_var} "${_lib}" PARENT_SCOPE)
    return()
  endif()
  set(_root "${EGG_CUDNN_ROOT}")
  if(NOT _root)
    set(_root "$ENV{EGG_CUDNN_ROOT}")
  endif()
  set(_lib "")
  if(NOT _root STREQUAL "none")
    if(NOT _root)
      if(NOT CUDAToolkit_FOUND)
        find_package(CUDAToolkit QUIET)
      endif()
      foreach(_cand IN ITEMS "${CUDAToolkit_LIBRARY_ROOT}" "${CUDAToolkit_TARGET_DIR}")
        if(_cand AND EXISTS "${_cand}/include/cudnn.h")
          set(_root "${_cand}")
          break()
        endif()
      endforeach()
    endif()
    if(NOT _root AND python)
      execute_process(COMMAND "${python}" -c "import nvidia.cudnn as m; print(list(m.__path__)[0])"
                      OUTPUT_VARIABLE _py RESULT_VARIABLE _rc OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
      if(_rc EQUAL 0 AND EXISTS "${_py}/include/cudnn.h")
        set(_root "${_py}")
      endif()
    endif()
    if(_root)
      find_library(_egg_cudnn_lib NAMES cudnn libcudnn.so.9 libcudnn.so.8
                   PATHS "${_root}/lib64" "${_root}/lib" NO_DEFAULT_PATH NO_CACHE)
      if(_egg_cudnn_lib AND EXISTS "${_root}/include/cudnn.h")
        set(_lib "${_egg_cudnn_lib}")
      else()
        set(_root "")
      endif()
    endif()
  else()
    set(_root "")
  endif()
  set_property(GLOBAL PROPERTY EGG_CUDNN_DONE_ TRUE)
  set_property(GLOBAL PROPERTY EGG_CUDNN_ROOT_ "${_root}")
  set_property(GLOBAL PROPERTY EGG_CUDNN_LIB_ "${_lib}")
  set(${root_var} "${_root}" PARENT_SCOPE)
  set(${lib_var} "${_lib}" PARENT_SCOPE)
endfunction()

function(egg_kernel target op)
  cmake_parse_arguments(PARSE_ARGV 2 EK "" "NAME;BACKEND;MODEL;PRECISION;VENDOR_DIR"
                        "ARCH;OPTIONS;TOLERANCE")
  set(_where "egg_kernel(${target} ${op})")

  # ---- arguments -------------------------------------------------------------------------------
  if(EK_UNPARSED_ARGUMENTS)
    _egg_fail("${_where}: unexpected arguments: ${EK_UNPARSED_ARGUMENTS}. "
              "Usage: egg_kernel(<target> <op.py> ARCH <sm_XX>... [NAME n] [BACKEND b] [MODEL m] "
              "[OPTIONS k=v...] [TOLERANCE atol rtol] [PRECISION p] [VENDOR_DIR d])")
  endif()
  if(NOT TARGET "${target}")
    _egg_fail("${_where}: '${target}' is not a target. Create it first "
              "(add_executable(${target} ...) or add_library(${target} ...)).")
  endif()
  get_target_property(_type "${target}" TYPE)
  get_target_property(_imported "${target}" IMPORTED)
  if(_imported OR NOT _type MATCHES "^(EXECUTABLE|STATIC_LIBRARY|SHARED_LIBRARY|MODULE_LIBRARY|OBJECT_LIBRARY)$")
    _egg_fail("${_where}: target '${target}' (${_type}) cannot compile sources; use an executable "
              "or a library target.")
  endif()

  get_filename_component(_op "${op}" ABSOLUTE BASE_DIR "${CMAKE_CURRENT_SOURCE_DIR}")
  if(NOT EXISTS "${_op}" OR IS_DIRECTORY "${_op}")
    _egg_fail("${_where}: op file '${_op}' does not exist. Give the path of a KernelBench-format "
              "op.py (class Model, get_inputs(), get_init_inputs()), relative to "
              "${CMAKE_CURRENT_SOURCE_DIR} or absolute.")
  endif()

  if(NOT EK_ARCH)
    _egg_fail("${_where}: ARCH is missing. Name the GPU architectures to generate for, "
              "e.g. ARCH sm_90 (H100/H200) or ARCH sm_90 sm_80.")
  endif()
  set(_arch_args "")
  set(_arch_nums "")
  foreach(_a IN LISTS EK_ARCH)
    if(NOT _a MATCHES "^sm_([0-9][0-9]+[af]?)$")
      _egg_fail("${_where}: ARCH value '${_a}' is malformed. Use sm_<major><minor>, "
                "e.g. sm_80, sm_90, sm_90a, sm_100a.")
    endif()
    list(APPEND _arch_nums "${CMAKE_MATCH_1}")
    list(APPEND _arch_args --arch "${_a}")
  endforeach()
  list(REMOVE_DUPLICATES _arch_nums)

  if(DEFINED EK_NAME)
    set(_name "${EK_NAME}")
    if(NOT _name MATCHES "^[A-Za-z_][A-Za-z0-9_]*$")
      _egg_fail("${_where}: NAME '${_name}' is not a C identifier (letters, digits, _; "
                "not starting with a digit).")
    endif()
    if(_name IN_LIST _EGG_CXX_KEYWORDS)
      _egg_fail("${_where}: NAME '${_name}' is a C++ keyword; choose another.")
    endif()
  else()
    get_filename_component(_stem "${_op}" NAME_WE)
    string(MAKE_C_IDENTIFIER "${_stem}" _name)
    if(_name IN_LIST _EGG_CXX_KEYWORDS)
      string(APPEND _name "_")
    endif()
  endif()

  get_property(_used GLOBAL PROPERTY "_EGG_KERNEL_${_name}")
  if(_used)
    _egg_fail("${_where}: kernel NAME '${_name}' is already used (${_used}). Every kernel needs "
              "its own name (namespace egg::${_name}); pass NAME <other> to one of them.")
  endif()
  set_property(GLOBAL PROPERTY "_EGG_KERNEL_${_name}"
               "by egg_kernel(${target} ${op}) in ${CMAKE_CURRENT_SOURCE_DIR}")

  set(_backend builtin)
  if(DEFINED EK_BACKEND)
    if(NOT EK_BACKEND MATCHES "^[a-z][a-z0-9_-]*$")
      _egg_fail("${_where}: BACKEND '${EK_BACKEND}' is malformed; use builtin, openai, anthropic "
                "or replay.")
    endif()
    set(_backend "${EK_BACKEND}")
  endif()

  set(_opt_args "")
  foreach(_o IN LISTS EK_OPTIONS)
    if(NOT _o MATCHES "^[A-Za-z_][A-Za-z0-9_.-]*=")
      _egg_fail("${_where}: OPTIONS value '${_o}' is not of the form key=value.")
    endif()
    list(APPEND _opt_args --option "${_o}")
  endforeach()
  if(DEFINED EK_TOLERANCE)
    list(LENGTH EK_TOLERANCE _n)
    set(_num "^[0-9]*\\.?[0-9]+([eE][-+]?[0-9]+)?$")
    list(GET EK_TOLERANCE 0 _atol)
    if(_n EQUAL 2)
      list(GET EK_TOLERANCE 1 _rtol)
    endif()
    if(NOT _n EQUAL 2 OR NOT _atol MATCHES "${_num}" OR NOT _rtol MATCHES "${_num}")
      _egg_fail("${_where}: TOLERANCE takes two numbers, atol and rtol, e.g. TOLERANCE 1e-3 1e-3.")
    endif()
    list(APPEND _opt_args --tolerance "${_atol}" "${_rtol}")
  endif()
  if(DEFINED EK_PRECISION)
    if(NOT EK_PRECISION MATCHES "^[a-z0-9_]+$")
      _egg_fail("${_where}: PRECISION '${EK_PRECISION}' is malformed; e.g. PRECISION tf32.")
    endif()
    list(APPEND _opt_args --option "precision=${EK_PRECISION}")
  endif()

  get_property(_langs GLOBAL PROPERTY ENABLED_LANGUAGES)
  if(NOT "CUDA" IN_LIST _langs)
    _egg_fail("${_where}: CUDA is not an enabled language, so the generated kernel cannot be "
              "compiled. Add CUDA to your project's languages, e.g. "
              "project(<name> LANGUAGES CXX CUDA), or call enable_language(CUDA) before egg_kernel().")
  endif()

  # ---- the generator and its inputs ------------------------------------------------------------
  if(NOT TARGET EGG::egg-gen)
    _egg_fail("${_where}: the target EGG::egg-gen does not exist. Call find_package(EGG REQUIRED) "
              "first.")
  endif()
  set(_vendor_use FALSE)
  if(DEFINED EK_VENDOR_DIR)
    if(NOT EGG_VENDOR_MODE MATCHES "^(use|check)$")
      _egg_fail("${_where}: EGG_VENDOR_MODE is '${EGG_VENDOR_MODE}'; use 'use' or 'check'.")
    endif()
    get_filename_component(_vdir "${EK_VENDOR_DIR}/${_name}" ABSOLUTE BASE_DIR "${CMAKE_CURRENT_SOURCE_DIR}")
    if(EGG_VENDOR_MODE STREQUAL "use")
      set(_vendor_use TRUE)
    endif()
  endif()
  # Python (with torch) is needed only where kernels are generated, not to compile vendored ones.
  if(NOT EGG_PYTHON_EXECUTABLE AND NOT _vendor_use)
    include("${_EGG_KERNEL_LIST_DIR}/EGGPython.cmake")
    egg_find_python(EGG_PYTHON_EXECUTABLE)
  endif()
  set(_python "${EGG_PYTHON_EXECUTABLE}")
  if(NOT _python)
    set(_python python3)  # the update target's generator reports a Python without torch clearly
  endif()
  _egg_data_dir(_data)
  _egg_data_files("${_data}" _data_files)

  set(_dir "${CMAKE_CURRENT_BINARY_DIR}/egg/${_name}")
  set(_cu "${_dir}/${_name}.cu")
  set(_h "${_dir}/include/egg/${_name}.h")
  set(_manifest "${_dir}/manifest.json")
  set(_depfile "${_dir}/${_name}.d")

  set(_cmd "$<TARGET_FILE:EGG::egg-gen>" generate "${_op}" ${_arch_args}
      --out "${_dir}" --name "${_name}" --backend "${_backend}")
  if(DEFINED EK_MODEL)
    list(APPEND _cmd --model "${EK_MODEL}")
  endif()
  list(APPEND _cmd ${_opt_args}
       --python "${_python}" --nvcc "${CMAKE_CUDA_COMPILER}" --data-dir "${_data}")
  _egg_find_cudnn("${_python}" _cudnn_root _cudnn_lib)
  if(_cudnn_root)
    list(APPEND _cmd --cudnn "${_cudnn_root}")
  else()
    list(APPEND _cmd --cudnn none)
  endif()
  if(EGG_CACHE_DIR)
    get_filename_component(_cache "${EGG_CACHE_DIR}" ABSOLUTE BASE_DIR "${CMAKE_BINARY_DIR}")
    list(APPEND _cmd --cache-dir "${_cache}")
  endif()
  if(EGG_REQUIRE_VERIFIED)
    list(APPEND _cmd --require-verified)
  endif()
  if(EGG_REQUIRE_FASTER)
    list(APPEND _cmd --require-faster)
  endif()
  if(EGG_REMOTE_CACHE)
    list(APPEND _cmd --remote-cache "${EGG_REMOTE_CACHE}")
  endif()
  if(EGG_REMOTE_CACHE_READ_ONLY)
    list(APPEND _cmd --remote-cache-read-only)
  endif()
  if(EGG_VERBOSE)
    list(PREPEND _cmd "${CMAKE_COMMAND}" -E env EGG_LOG=debug)
    list(JOIN _cmd " " _shown)
    message(STATUS "EGG: kernel ${_name}: ${_shown}")
  endif()

  file(RELATIVE_PATH _op_rel "${CMAKE_SOURCE_DIR}" "${_op}")
  if(_op_rel MATCHES "^\\.\\./")
    set(_op_rel "${_op}")
  endif()

  if(DEFINED EK_VENDOR_DIR)
    # Regenerates the checked-in copy (run it on a machine with a GPU to vendor verified kernels).
    set(_update_cmd ${_cmd})
    list(TRANSFORM _update_cmd REPLACE "^${_dir}$" "${_vdir}")
    add_custom_target(egg_vendor_update_${_name}
      COMMAND ${_update_cmd}
      COMMAND "${CMAKE_COMMAND}" -E rm -f "${_vdir}/${_name}.d"
      DEPENDS EGG::egg-gen
      COMMENT "EGG: updating the vendored kernel ${_name} in ${_vdir}"
      VERBATIM)
    if(NOT TARGET egg_vendor_update)
      add_custom_target(egg_vendor_update)
    endif()
    add_dependencies(egg_vendor_update egg_vendor_update_${_name})
  endif()

  if(_vendor_use)
    # Release builds: the checked-in kernel, compiled as it is; nothing is generated.
    foreach(_f "${_vdir}/${_name}.cu" "${_vdir}/include/egg/${_name}.h" "${_vdir}/manifest.json")
      if(NOT EXISTS "${_f}")
        _egg_fail("${_where}: the vendored kernel is incomplete: ${_f} is missing. Generate it with "
                  "`cmake --build <build dir> --target egg_vendor_update_${_name}` (on a GPU "
                  "machine, so it is verified) and commit ${_vdir}, or configure with "
                  "-DEGG_VENDOR_MODE=check to generate it in the build tree.")
      endif()
    endforeach()
    set(_dir "${_vdir}")
    set(_cu "${_vdir}/${_name}.cu")
    set(_manifest "${_vdir}/manifest.json")
  else()
    set(_live "")
    if(EGG_LIVE_PROGRESS)
      set(_live USES_TERMINAL)
    endif()
    add_custom_command(
      OUTPUT "${_cu}" "${_h}" "${_manifest}"
      COMMAND ${_cmd}
      ${_live}
      DEPENDS "${_op}" EGG::egg-gen "$<TARGET_FILE:EGG::egg-gen>" ${_data_files}
      DEPFILE "${_depfile}"
      COMMENT "EGG: generating kernel ${_name} from ${_op_rel}"
      VERBATIM)
  endif()
  if(DEFINED EK_VENDOR_DIR AND NOT _vendor_use)
    # Check mode: the build fails, with a diff and the update command, when the copy is stale. The
    # comparison runs on every build (a few milliseconds), so a copy written or edited after
    # configuring is still checked.
    add_custom_target(egg_vendor_check_${_name}
      COMMAND "${CMAKE_COMMAND}" -DNAME=${_name} -DGENERATED=${_dir} -DVENDORED=${_vdir}
              "-DUPDATE=cmake --build ${CMAKE_BINARY_DIR} --target egg_vendor_update_${_name}"
              -DSTAMP=${_dir}/vendor-check.stamp -P "${_EGG_KERNEL_LIST_DIR}/EGGVendorCheck.cmake"
      DEPENDS "${_cu}" "${_h}"
      COMMENT "EGG: checking the vendored kernel ${_name}"
      VERBATIM)
    add_dependencies("${target}" egg_vendor_check_${_name})
  endif()

  # ---- wire it into the target -----------------------------------------------------------------
  target_sources("${target}" PRIVATE "${_cu}")
  target_include_directories("${target}" PRIVATE "${_dir}/include")
  set_property(TARGET "${target}" APPEND PROPERTY EGG_KERNELS "${_name}")
  set_property(TARGET "${target}" APPEND PROPERTY EGG_MANIFESTS "${_manifest}")

  # CUDA_ARCHITECTURES: the union of every egg_kernel()'s ARCH on this target and what the project
  # set. CMake's automatic default (the compiler's default arch, chosen when neither
  # CMAKE_CUDA_ARCHITECTURES nor CUDAARCHS was given) and all/all-major/native are replaced on the
  # first call: a kernel is only compiled for the arches it was generated for.
  get_target_property(_archs "${target}" CUDA_ARCHITECTURES)
  get_target_property(_egg_set "${target}" EGG_ARCH_SET_)
  if(NOT _egg_set)
    get_property(_help CACHE CMAKE_CUDA_ARCHITECTURES PROPERTY HELPSTRING)
    if(NOT _archs OR _archs MATCHES "^(all|all-major|native)$"
       OR (_help STREQUAL "CUDA architectures" AND "$ENV{CUDAARCHS}" STREQUAL ""
           AND "${_archs}" STREQUAL "$CACHE{CMAKE_CUDA_ARCHITECTURES}"
           AND "${CMAKE_CUDA_ARCHITECTURES}" STREQUAL "$CACHE{CMAKE_CUDA_ARCHITECTURES}"))
      set(_archs "")
    endif()
    set_property(TARGET "${target}" PROPERTY EGG_ARCH_SET_ TRUE)
  endif()
  list(APPEND _archs ${_arch_nums})
  list(REMOVE_DUPLICATES _archs)
  set_property(TARGET "${target}" PROPERTY CUDA_ARCHITECTURES "${_archs}")

  # CUDA runtime: the flavour CUDA_RUNTIME_LIBRARY asks for (static, CMake's default for nvcc).
  if(NOT TARGET CUDA::cudart)
    find_package(CUDAToolkit REQUIRED)
  endif()
  get_target_property(_rt "${target}" CUDA_RUNTIME_LIBRARY)
  if(NOT _rt)
    set(_rt "${CMAKE_CUDA_RUNTIME_LIBRARY}")
  endif()
  string(TOLOWER "${_rt}" _rt)
  if(_rt STREQUAL "shared" OR _rt STREQUAL "none")
    set(_cudart CUDA::cudart)
  else()
    set(_cudart CUDA::cudart_static)
  endif()
  get_target_property(_linked "${target}" LINK_LIBRARIES)
  # cuBLASLt/cuBLAS: the builtin GEMM family's kernels call them (a library call plus a fused
  # epilogue); cuDNN (when found): the conv family's cuDNN structure calls it.
  if(_cudnn_root)
    target_include_directories("${target}" PRIVATE "${_cudnn_root}/include")
  endif()
  foreach(_lib IN ITEMS ${_cudart} CUDA::cublasLt CUDA::cublas ${_cudnn_lib})
    if(NOT _lib IN_LIST _linked AND (TARGET ${_lib} OR EXISTS "${_lib}"))
      # Appended directly (not target_link_libraries) so both its plain and keyword signatures keep
      # working for the project; PRIVATE semantics, as target_link_libraries(PRIVATE) would give.
      set_property(TARGET "${target}" APPEND PROPERTY LINK_LIBRARIES "${_lib}")
      if(_type STREQUAL "STATIC_LIBRARY")
        set_property(TARGET "${target}" APPEND PROPERTY INTERFACE_LINK_LIBRARIES "$<LINK_ONLY:${_lib}>")
      endif()
    endif()
  endforeach()

  # The header's forward(torch::Tensor...) wrapper, only when the target links LibTorch.
  get_target_property(_has_def "${target}" EGG_LIBTORCH_DEF_)
  if(NOT _has_def)
    target_compile_definitions("${target}" PRIVATE
      "$<$<IN_LIST:torch,$<TARGET_PROPERTY:LINK_LIBRARIES>>:EGG_WITH_LIBTORCH=1>")
    set_property(TARGET "${target}" PROPERTY EGG_LIBTORCH_DEF_ TRUE)
  endif()
endfunction()

cmake_policy(POP)
