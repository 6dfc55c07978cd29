# -DIBENCH_SANITIZE=address,undefined builds everything with those sanitizers.
if(IBENCH_SANITIZE)
  add_compile_options(-fsanitize=${IBENCH_SANITIZE} -fno-omit-frame-pointer -fno-sanitize-recover=undefined)
  add_link_options(-fsanitize=${IBENCH_SANITIZE})
endif()
# -DIBENCH_FUZZ=ON (clang): every library gets libFuzzer's coverage instrumentation; fuzz/ links the fuzzer itself.
if(IBENCH_FUZZ)
  add_compile_options($<$<COMPILE_LANGUAGE:C,CXX>:-fsanitize=fuzzer-no-link>)
endif()
