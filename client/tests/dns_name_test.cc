// Names on the wire: compression pointers, lengths, reserved label types, text forms.
#include "dns_name.h"

#include <gtest/gtest.h>

#include <string>

#include "dns_packet_builder.h"

using dns_test::Bytes;
using dns_test::ExactCopy;
using namespace std::literals;

namespace {

// An empty header: the first name written after it sits at offset 12.
Bytes message() { return Bytes().header(0, 0, 0, 0); }

// "name next=N", or the fault: one canonical line per read.
std::string read(const Bytes& msg, size_t offset) {
  ExactCopy copy(msg.octets);
  dns::Name name;
  size_t next = 0;
  dns::Fault fault = dns::read_name(copy.span(), offset, name, next);
  if (fault != dns::Fault::none) return dns::fault_name(fault);
  return dns::name_to_text(name) + " next=" + std::to_string(next);
}

std::string text_to_wire(std::string_view text) {
  dns::Name name;
  if (!dns::name_from_text(text, name)) return "rejected";
  return dns::name_to_text(name) + " (" + std::to_string(name.size) + " octets)";
}

const std::string k63(63, 'a');
const std::string k62(62, 'b');
const std::string k61(61, 'c');

}  // namespace

/* A name written out in full is read as it stands */
TEST(DnsName, PlainNameIsRead) { EXPECT_EQ("www.example.com next=29", read(message().name("www.example.com"), 12)); }

/* The root name is a single zero octet */
TEST(DnsName, RootNameIsRead) { EXPECT_EQ(". next=13", read(message().name(""), 12)); }

/* A pointer back to an earlier name ends the name; next is just after the pointer */
TEST(DnsName, PointerBackToAnEarlierNameIsFollowed) {
  Bytes msg = message().name("example.com");  // 12..24
  msg.labels("www").pointer(12);              // 25..30
  EXPECT_EQ("www.example.com next=31", read(msg, 25));
}

/* Pointers may chain, each going further back */
TEST(DnsName, PointerToAPointerFurtherBackIsFollowed) {
  Bytes msg = message().name("com");  // 12..16
  msg.labels("example").pointer(12);  // 17..26
  msg.labels("www").pointer(17);      // 27..32
  msg.pointer(27);                    // 33..34
  EXPECT_EQ("www.example.com next=35", read(msg, 33));
}

/* A pointer to its own offset would loop forever */
TEST(DnsName, PointerToItselfIsRejected) { EXPECT_EQ("pointer_forward", read(message().pointer(12), 12)); }

/* A pointer to the start of the name that contains it would loop */
TEST(DnsName, PointerToItsOwnNameStartIsRejected) {
  EXPECT_EQ("pointer_forward", read(message().labels("www").pointer(12), 12));
}

/* A pointer forward is rejected even when a valid name is there */
TEST(DnsName, PointerForwardIsRejected) {
  Bytes msg = message().pointer(14);  // 12..13
  msg.name("example.com");            // 14..
  EXPECT_EQ("pointer_forward", read(msg, 12));
}

/* After a jump, the next pointer must land before the tail it continues, not only before the first start */
TEST(DnsName, PointerMustLandBeforeTheTailItContinues) {
  Bytes msg = message().name("x").name("pad");  // 12..19
  msg.pointer(25);                              // 20..21: forward of 20, yet before 28
  msg.name("y").name("a");                      // 22..24, 25..27
  msg.pointer(20);                              // 28..29
  EXPECT_EQ("pointer_forward", read(msg, 28));
  // Control: the same layout with the inner pointer behind 20 is followed.
  Bytes control = message().name("x").name("pad").pointer(12).name("y").name("a").pointer(20);
  EXPECT_EQ("x next=30", read(control, 28));
}

/* A pointer past the end of the message is rejected */
TEST(DnsName, PointerOutsideTheMessageIsRejected) { EXPECT_EQ("pointer_outside", read(message().pointer(0x3FFF), 12)); }

/* A pointer into the header is rejected: no name starts there */
TEST(DnsName, PointerIntoTheHeaderIsRejected) { EXPECT_EQ("pointer_outside", read(message().pointer(4), 12)); }

/* A pointer cut after its first octet is rejected */
TEST(DnsName, TruncatedPointerIsRejected) { EXPECT_EQ("name_past_end", read(message().labels("www").u8(0xC0), 12)); }

/* 128 jumps are followed; a chain of 200 backward pointers is cut at 128 */
TEST(DnsName, ChainOf200PointersIsRejected) {
  Bytes msg = message().name("a");  // 12..14
  size_t last = 12;
  for (int i = 0; i < 200; ++i) {
    size_t here = msg.size();
    msg.pointer(static_cast<uint16_t>(last));
    last = here;
    if (i == 127) EXPECT_EQ("a next=" + std::to_string(here + 2), read(msg, here));  // 128 jumps
    if (i == 128) EXPECT_EQ("too_many_jumps", read(msg, here));                      // 129 jumps
  }
  EXPECT_EQ("too_many_jumps", read(msg, last));
}

/* A label whose length runs past the end of the message is rejected */
TEST(DnsName, LabelLengthPastTheEndIsRejected) { EXPECT_EQ("name_past_end", read(message().u8(10).u8('w'), 12)); }

/* A name without its root label runs past the end */
TEST(DnsName, MissingRootLabelIsRejected) { EXPECT_EQ("name_past_end", read(message().labels("www"), 12)); }

/* An offset at the end of the message has no name */
TEST(DnsName, OffsetAtTheEndIsRejected) { EXPECT_EQ("name_past_end", read(message().name("a"), 15)); }

/* Label types 01 (retired EDNS0 extended label) and 10 (unassigned) are rejected */
TEST(DnsName, ReservedLabelTypesAreRejected) {
  EXPECT_EQ("label_reserved", read(message().u8(0x41).u8(0), 12));
  EXPECT_EQ("label_reserved", read(message().u8(0x80).u8(0), 12));
  EXPECT_EQ("label_reserved", read(message().labels("www").u8(0x40).u8(0), 12));
}

/* 255 octets on the wire is the longest name; 256 is rejected */
TEST(DnsName, NameOf255OctetsIsAcceptedAnd256Rejected) {
  std::string longest = k63 + "." + k63 + "." + k63 + "." + k61;   // 3*64 + 62 + 1 = 255
  std::string too_long = k63 + "." + k63 + "." + k63 + "." + k62;  // 256
  EXPECT_EQ(longest + " next=267", read(message().name(longest), 12));
  EXPECT_EQ("name_too_long", read(message().name(too_long), 12));
}

/* The limit holds for the expanded name, also when pointers assemble it */
TEST(DnsName, NameOf256OctetsThroughPointersIsRejected) {
  Bytes msg = message().name(k63 + "." + k61);  // 12..138: 64 + 62 + 1 = 127 octets
  size_t ok_at = msg.size();
  msg.labels(k63 + "." + k63).pointer(12);  // 128 + 127 = 255
  size_t long_at = msg.size();
  msg.labels(k63 + "." + k63 + ".x").pointer(12);  // 128 + 2 + 127 = 257
  EXPECT_EQ(k63 + "." + k63 + "." + k63 + "." + k61 + " next=" + std::to_string(long_at), read(msg, ok_at));
  EXPECT_EQ("name_too_long", read(msg, long_at));
}

/* A NUL inside a label is data: it shows escaped and does not end the name */
TEST(DnsName, NulInsideALabelIsData) {
  EXPECT_EQ("a\\000b.example next=25", read(message().name("a\0b.example"sv), 12));
}

/* A dot, a backslash and a space inside a label are escaped, so two names cannot print alike */
TEST(DnsName, SpecialBytesInALabelAreEscaped) {
  EXPECT_EQ("a\\.b.c\\\\d\\032e next=23", read(message().label("a.b").label("c\\d e").u8(0), 12));
}

/* Comparison ignores ASCII case and nothing else */
TEST(DnsName, SameNameIgnoresAsciiCaseOnly) {
  dns::Name a, b, c, d;
  ASSERT_TRUE(dns::name_from_text("WWW.Example.COM", a));
  ASSERT_TRUE(dns::name_from_text("www.example.com.", b));
  ASSERT_TRUE(dns::name_from_text("ab.c", c));
  ASSERT_TRUE(dns::name_from_text("a.bc", d));
  EXPECT_TRUE(dns::same_name(a, b));
  EXPECT_FALSE(dns::same_name(c, d));  // same text length, labels cut elsewhere
  EXPECT_EQ("WWW.Example.COM", dns::name_to_text(a));
}

/* Every letter A to Z folds, the last one too */
TEST(DnsName, SameNameFoldsEveryLetterFromAToZ) {
  dns::Name a, b;
  ASSERT_TRUE(dns::name_from_text("AZ.ZA", a));
  ASSERT_TRUE(dns::name_from_text("az.za", b));
  EXPECT_TRUE(dns::same_name(a, b));
}

/* Printable ASCII from '!' to '~' is written as it is; the bytes around it by their decimal value */
TEST(DnsName, PrintableEdgesAsTheyAreOtherBytesInDecimal) {
  EXPECT_EQ("!~\\200\\255\\127\\032 next=20", read(message().label("!~\xC8\xFF\x7F ").u8(0), 12));
}

/* A NUL inside a label makes another name, not a shorter one */
TEST(DnsName, NulInsideALabelDoesNotCompareEqual) {
  ExactCopy copy(message().name("www\0.example.com"sv).octets);
  dns::Name read_back, asked;
  size_t next = 0;
  ASSERT_EQ(dns::Fault::none, dns::read_name(copy.span(), 12, read_back, next));
  ASSERT_TRUE(dns::name_from_text("www.example.com", asked));
  EXPECT_FALSE(dns::same_name(read_back, asked));
}

/* The first octet is compared too: "a.a" and the one label "a\001a" differ in it alone */
TEST(DnsName, NamesThatDifferOnlyInTheFirstLengthOctetDiffer) {
  ExactCopy copy(message().label("a\x01" "a").u8(0).octets);
  dns::Name one_label, two_labels;
  size_t next = 0;
  ASSERT_EQ(dns::Fault::none, dns::read_name(copy.span(), 12, one_label, next));
  ASSERT_TRUE(dns::name_from_text("a.a", two_labels));
  ASSERT_EQ(one_label.size, two_labels.size);
  EXPECT_FALSE(dns::same_name(one_label, two_labels));
  EXPECT_FALSE(dns::same_name(two_labels, one_label));
}

/* Text names: host-name bytes, labels of 1 to 63, 255 octets in all */
TEST(DnsName, TextNamesAreCheckedBeforeTheyAreSent) {
  EXPECT_EQ("www.example.com (17 octets)", text_to_wire("www.example.com"));
  EXPECT_EQ("www.example.com (17 octets)", text_to_wire("www.example.com."));
  EXPECT_EQ("_dns.a-b.example (18 octets)", text_to_wire("_dns.a-b.example"));
  EXPECT_EQ("rejected", text_to_wire(""));
  EXPECT_EQ("rejected", text_to_wire("."));
  EXPECT_EQ("rejected", text_to_wire("a..b"));
  EXPECT_EQ("rejected", text_to_wire(".a"));
  EXPECT_EQ("rejected", text_to_wire("a.."));
  EXPECT_EQ("rejected", text_to_wire(std::string(64, 'a')));
  EXPECT_EQ(k63 + " (65 octets)", text_to_wire(k63));
  EXPECT_EQ("rejected", text_to_wire("exa\0mple.com"sv));
  EXPECT_EQ("rejected", text_to_wire("exa mple.com"));
  EXPECT_EQ("rejected", text_to_wire("exa\\.mple.com"));
  EXPECT_EQ("rejected", text_to_wire("ex\xc3\xa4mple.com"));
}

/* 253 characters of text is 255 octets on the wire: the longest name a query can carry */
TEST(DnsName, TextNameOf253CharactersIsTheLongest) {
  std::string longest = k63 + "." + k63 + "." + k63 + "." + k61;
  ASSERT_EQ(253u, longest.size());
  EXPECT_EQ(longest + " (255 octets)", text_to_wire(longest));
  EXPECT_EQ("rejected", text_to_wire(longest + "c"));
  EXPECT_EQ(longest + " (255 octets)", text_to_wire(longest + "."));
}
