# -DIBENCH_SANITIZE=address,undefined builds everything with those sanitizers.
if(IBENCH_SANITIZE)
  add_compile_options(-fsanitize=${IBENCH_SANITIZE} -fno-omit-frame-pointer -fno-sanitize-recover=undefined)
  add_link_options(-fsanitize=${IBENCH_SANITIZE})
endif()
