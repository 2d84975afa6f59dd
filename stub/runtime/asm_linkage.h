// How a symbol shared by the stub's assembly and its C++ is declared: extern "C" and hidden, since
// the stub is one static PIE reached RIP-relative. Each such symbol is declared by the folder that
// defines it, next to its assembly or its C++.
#pragma once

#define KPACK_ASM_SYMBOL __attribute__((visibility("hidden")))
