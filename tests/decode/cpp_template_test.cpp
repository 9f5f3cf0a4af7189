// regcmd-dis --format cpp's texts from outside (regcmd/decode/cpp_template.hpp): a file name copied
// into the header's comment cannot end the comment, and names that would make a header the
// implementation reserves, or a macro replaces, are refused (issue 32, N5 and N6).
#include <doctest/doctest.h>

#include <string>

#include <regcmd/decode/dump.hpp>

#include <regcmd/decode/cpp_template.hpp>

using namespace regcmd::cpp_header;

TEST_CASE("a file name in the header's comment: control and non-ASCII bytes escaped") {
  // A newline ended the // comment: the rest of the name was live C++ in the header.
  CHECK(comment_text("x\nint pwned = 1;\n.bin") == "x\\x0aint pwned = 1;\\x0a.bin");
  // A backslash at a line's end splices the next line into the comment.
  CHECK(comment_text("dump\\") == "dump\\x5c");
  // U+202E RIGHT-TO-LEFT OVERRIDE (e2 80 ae in UTF-8) reorders the code shown after it.
  CHECK(comment_text("a\xe2\x80\xae.bin") == "a\\xe2\\x80\\xae.bin");
  CHECK(comment_text("\r\t\x7f") == "\\x0d\\x09\\x7f");
  CHECK(comment_text("plain_dump-1 (copy).bin") == "plain_dump-1 (copy).bin");
}

TEST_CASE("--name and --namespace: names the implementation reserves or a macro would replace are refused") {
  for (const char* name : {"_Pragma", "__asm__", "a__b", "_x", "_Capital", "NULL", "EOF", "INT32_MAX", "X1", "uint32_t",
                           "errno", "linux", "assert"}) {
    CAPTURE(name);
    CHECK(is_identifier(name));  // identifiers all, yet none may name the variable
    CHECK_FALSE(reserved_reason(name, false).empty());
  }
  for (const char* name_space : {"std", "std2", "std17", "posix", "main"}) {
    CAPTURE(name_space);
    CHECK_FALSE(reserved_reason(name_space, true).empty());
    CHECK(reserved_reason(name_space, false).empty());  // a variable of that name is fine
  }
  for (const char* ok : {"vendor_matmul", "ffn_Block", "x1", "stdio_program", "Npu"}) {
    CAPTURE(ok);
    CHECK(reserved_reason(ok, true).empty());
  }
}

TEST_CASE("a file's stem as the default name is never one the checks refuse") {
  CHECK(identifier_from("/tmp/__asm__.bin") == "captured_asm_");
  CHECK(identifier_from("NULL.bin") == "null");
  CHECK(identifier_from("_Pragma.txt") == "captured_Pragma");
  CHECK(identifier_from("9 lives.hex") == "captured_9_lives");
  CHECK(identifier_from("int.bin") == "int_program");
  CHECK(identifier_from("-") == "captured_program");
  CHECK(identifier_from("x\nint pwned = 1;\n.bin") == "x_int_pwned_1_");
  CHECK(identifier_from("errno.hex") == "errno_program");  // a macro: the header did not compile
  CHECK(identifier_from("linux.hex") == "linux_program");
  CHECK(identifier_from("size_t.bin") == "size_t_program");
  for (const char* path : {"/a/__asm__.bin", "NULL.bin", "_Pragma.txt", "9 lives.hex", "int.bin", "a..b", "__", "std.bin",
                           "errno.hex", "unix.bin", "x_t.bin"}) {
    CAPTURE(path);
    const std::string name = identifier_from(path);
    CHECK(is_identifier(name));
    CHECK(reserved_reason(name, false).empty());
  }
}

TEST_CASE("a hostile file name reaches the header as one comment line") {
  const regcmd::dump d = regcmd::read_dump(REGCMD_TEST_DATA_DIR "/small.txt", regcmd::dump_format::detect);
  REQUIRE(d.error.empty());
  const cpp_template t = make_cpp_template(d.entries, {.name = "hostile", .name_space = "captured",
                                                       .source = "d\nint pwned = 1;\n\xe2\x80\xae.txt"});
  REQUIRE(t.error.empty());
  CHECK(t.text.find("\nint pwned") == std::string::npos);
  CHECK(t.text.find("// Written by regcmd-dis --format cpp from d\\x0aint pwned = 1;\\x0a\\xe2\\x80\\xae.txt: ") !=
        std::string::npos);
  for (char c : t.text) CHECK_MESSAGE((c == '\n' || (c >= 0x20 && c < 0x7f)), "a byte outside printable ASCII");
}
