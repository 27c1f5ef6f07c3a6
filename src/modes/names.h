/* names: demangled C++ and Rust names made short enough for a narrow
 * column (pure; unit-tested).
 *
 * names_shorten drops what says which overload or instance a function is,
 * keeping where it is: the parameter list at the end ("f(int, char)" ->
 * "f"), template and generic arguments ("std::vector<int>::push_back" ->
 * "std::vector<...>::push_back"), and a Rust legacy hash ("::h0123..."),
 * but not the brackets of an operator's name (operator<<, operator(),
 * operator->) nor a group at the start ("(anonymous namespace)::f"). A name
 * whose brackets do not balance is copied as it is. Writes at most outsz-1
 * bytes and a NUL; returns the length written. */
#ifndef CSAMPLER_NAMES_H
#define CSAMPLER_NAMES_H
#include <stddef.h>

size_t names_shorten(const char *in, char *out, size_t outsz);

#endif
