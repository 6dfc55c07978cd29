# ibench_warnings(target): the project's warning set; errors when IBENCH_WERROR is on (CI).
function(ibench_warnings tgt)
  target_compile_options(${tgt} PRIVATE
    $<$<COMPILE_LANGUAGE:C,CXX>:-Wall -Wextra -Wshadow -Wpointer-arith -Wformat=2 -Wno-unused-parameter>
    $<$<COMPILE_LANGUAGE:C>:-Wstrict-prototypes -Wmissing-prototypes>)
  if(IBENCH_WERROR)
    target_compile_options(${tgt} PRIVATE $<$<COMPILE_LANGUAGE:C,CXX>:-Werror>)
  endif()
endfunction()
