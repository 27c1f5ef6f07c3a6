/* Unit tests for names_shorten: C++ parameter lists, templates, operators,
 * anonymous namespaces and lambdas; Rust generics and legacy hashes; names
 * that do not balance; the output bound. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "names.h"

static const char *shorten(const char *in)
{
	static char out[512];
	names_shorten(in, out, sizeof out);
	return out;
}

static void test_cxx(void **state)
{
	(void)state;
	assert_string_equal(shorten("main"), "main");
	assert_string_equal(shorten("work(int, char const*)"), "work");
	assert_string_equal(shorten("std::vector<int, std::allocator<int> >::push_back(int const&)"),
			    "std::vector<...>::push_back");
	assert_string_equal(shorten("Foo::bar() const"), "Foo::bar");
	assert_string_equal(shorten("Foo::bar() const &&"), "Foo::bar");
	assert_string_equal(shorten("(anonymous namespace)::helper(int)"),
			    "(anonymous namespace)::helper");
	assert_string_equal(shorten("operator<<(std::ostream&, Foo const&)"), "operator<<");
	assert_string_equal(shorten("Foo::operator()(int)"), "Foo::operator()");
	assert_string_equal(shorten("Foo::operator()"), "Foo::operator()");
	assert_string_equal(shorten("Foo::operator->() const"), "Foo::operator->");
	assert_string_equal(shorten("bool std::operator< <char>(A const&, B const&)"),
			    "bool std::operator< <...>");
	assert_string_equal(shorten("Foo::operator<=>(Foo const&) const"), "Foo::operator<=>");
	assert_string_equal(shorten("main::{lambda}::operator()"), "main::{lambda}::operator()");
	assert_string_equal(shorten("main::{lambda(int)#1}::operator()(int) const"),
			    "main::{lambda(int)#1}::operator()");
	assert_string_equal(shorten("std::_Function_handler<void (int), main::{lambda(int)#1}>"
				    "::_M_invoke(std::_Any_data const&, int&&)"),
			    "std::_Function_handler<...>::_M_invoke");
	assert_string_equal(shorten("void f<std::map<int, int> >(std::map<int, int>&)"),
			    "void f<...>");
}

static void test_rust(void **state)
{
	(void)state;
	assert_string_equal(shorten("core::ptr::drop_in_place<alloc::vec::Vec<u8>>"),
			    "core::ptr::drop_in_place<...>");
	assert_string_equal(shorten("rustnames::work::h0123456789abcdef"), "rustnames::work");
	assert_string_equal(shorten("<alloc::vec::Vec<T> as core::ops::Drop>::drop"),
			    "<...>::drop");
	assert_string_equal(shorten("std::rt::lang_start::{{closure}}"),
			    "std::rt::lang_start::{{closure}}");
}

static void test_odd(void **state)
{
	(void)state;
	char out[8];
	assert_string_equal(shorten("a<b"), "a<b");
	assert_string_equal(shorten("f(int"), "f(int");
	assert_string_equal(shorten("x>y)"), "x>y)");
	assert_string_equal(shorten(""), "");
	assert_string_equal(shorten(NULL), "");
	assert_int_equal(names_shorten("abcdefghijk", out, sizeof out), 7);
	assert_string_equal(out, "abcdefg");
	assert_int_equal(names_shorten("abc", out, 0), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cxx),
		cmocka_unit_test(test_rust),
		cmocka_unit_test(test_odd),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
