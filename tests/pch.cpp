// pch.cpp - the translation unit the test binaries' precompiled header is built with (tests/CMakeLists.txt): the
// header is GoogleTest's and the standard library's, parsed once instead of once per binary.
