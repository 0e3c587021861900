// Queries and the parsing of their responses: header checks, the question, answer records,
// CNAME chains, RCODE and TC, and the named malformed inputs.
#include "dns_message.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <string>

#include "dns_packet_builder.h"

using dns_test::ask;
using dns_test::Bytes;
using dns_test::kId;
using dns_test::kResponse;
using dns_test::Packet;
using dns_test::parse;
using namespace std::literals;

namespace {

std::string hex(const std::vector<uint8_t>& octets) {
  std::string out;
  char buf[3];
  for (uint8_t b : octets) {
    std::snprintf(buf, sizeof buf, "%02x", b);
    out += buf;
  }
  return out;
}

// The response to ask(): the header, then the question "www.example.com" A IN.
Packet www() { return Packet().question("www.example.com"); }

// The same, as raw octets, for damaged messages: the answer section starts at offset 33.
Bytes www_bytes(uint16_t ancount) { return Bytes().header(kId, kResponse, 1, ancount).question("www.example.com"); }

}  // namespace

/* The query is one question, RD set, in the order RFC 1035 4.1 lays out */
TEST(DnsQuery, QueryIsBuiltAsSent) {
  dns::Query query = dns::build_query(0xBEEF, "www.example.com");
  ASSERT_EQ(dns::ok, query.code);
  EXPECT_EQ(
      "beef01000001000000000000"
      "03777777076578616d706c6503636f6d00"
      "00010001",
      hex(query.message));
  EXPECT_EQ(hex(query.message), hex(dns::build_query(0xBEEF, "www.example.com.").message));
}

/* Names that cannot be asked are refused before anything is sent */
TEST(DnsQuery, InvalidNamesAreRejected) {
  for (std::string_view name : {""sv, "."sv, "a..b"sv, ".a"sv, "a\0b"sv, "a b"sv}) {
    EXPECT_EQ(dns::bad_name, dns::build_query(1, name).code) << name;
  }
  EXPECT_EQ(dns::bad_name, dns::build_query(1, std::string(64, 'a')).code);
  std::string label(63, 'a');
  EXPECT_EQ(dns::ok, dns::build_query(1, label + "." + label + "." + label + "." + std::string(61, 'a')).code);
  EXPECT_EQ(dns::bad_name, dns::build_query(1, label + "." + label + "." + label + "." + std::string(62, 'a')).code);
}

/* A query that was never built answers nothing */
TEST(DnsResponse, AnswerToAQueryNeverBuiltIsBadName) {
  EXPECT_EQ("bad_name", parse(www().a("www.example.com", "1.2.3.4").bytes(), dns::build_query(kId, "a..b")));
}

/* One A record for the name is the answer */
TEST(DnsResponse, OneAddressIsKept) {
  EXPECT_EQ("ok [1.2.3.4] ttl=300", parse(www().a("www.example.com", "1.2.3.4").bytes()));
}

/* Addresses keep answer order, and the smallest TTL is reported */
TEST(DnsResponse, AddressesKeepAnswerOrderAndTheSmallestTtl) {
  Packet p = www()
                 .a("www.example.com", "5.6.7.8", 600)
                 .a("www.example.com", "1.2.3.4", 30)
                 .a("www.example.com", "9.9.9.9", 90);
  EXPECT_EQ("ok [5.6.7.8 1.2.3.4 9.9.9.9] ttl=30", parse(p.bytes()));
}

/* A TTL with its top bit set counts as 0 (RFC 2181 8) */
TEST(DnsResponse, TtlWithTopBitSetCountsAsZero) {
  EXPECT_EQ("ok [1.2.3.4] ttl=0", parse(www().a("www.example.com", "1.2.3.4", 0x80000000u).bytes()));
}

/* A TTL is all 32 bits, up to the largest legal one */
TEST(DnsResponse, TtlIsReadAsAllThirtyTwoBits) {
  EXPECT_EQ("ok [1.2.3.4] ttl=305419896", parse(www().a("www.example.com", "1.2.3.4", 0x12345678u).bytes()));
  EXPECT_EQ("ok [1.2.3.4] ttl=2147483647", parse(www().a("www.example.com", "1.2.3.4", 0x7fffffffu).bytes()));
}

/* Names compare without case: a 0x20-randomised question and owner still match */
TEST(DnsResponse, CaseOfTheQuestionAndOwnerIsIgnored) {
  Packet p = Packet().question("wWw.ExAmPlE.cOm").a("WWW.EXAMPLE.COM", "1.2.3.4");
  EXPECT_EQ("ok [1.2.3.4] ttl=300", parse(p.bytes()));
}

/* The usual compressed answer: owner names are pointers to the question */
TEST(DnsResponse, CompressedOwnersAreRead) {
  Bytes msg = www_bytes(2);
  msg.pointer(12).fixed(dns::type_a, dns::class_in, 60, 4).addr("1.2.3.4");
  msg.pointer(12).fixed(dns::type_a, dns::class_in, 60, 4).addr("5.6.7.8");
  EXPECT_EQ("ok [1.2.3.4 5.6.7.8] ttl=60", parse(msg.octets));
}

/* Empty and short headers are malformed */
TEST(DnsResponse, EmptyAndShortHeadersAreMalformed) {
  EXPECT_EQ("malformed(header_short)", parse({}));
  std::vector<uint8_t> eleven = www_bytes(0).octets;
  eleven.resize(11);
  EXPECT_EQ("malformed(header_short)", parse(eleven));
}

/* An ANCOUNT larger than the records present runs off the end */
TEST(DnsResponse, AncountLargerThanTheDataIsMalformed) {
  EXPECT_EQ("malformed(name_past_end)", parse(www().a("www.example.com", "1.2.3.4").ancount(2).bytes()));
  EXPECT_EQ("malformed(name_past_end)", parse(www_bytes(1).octets));
}

/* A QDCOUNT other than 1 is not the answer to our one question */
TEST(DnsResponse, QdcountOtherThanOneIsAQuestionMismatch) {
  EXPECT_EQ("question_mismatch", parse(Bytes().header(kId, kResponse, 0, 0).octets));
  EXPECT_EQ("question_mismatch", parse(www().question("www.example.com").bytes()));
  EXPECT_EQ("question_mismatch", parse(Bytes().header(kId, kResponse, 0xFFFF, 0).octets));
}

/* A message cut inside the question's name or its type is malformed */
TEST(DnsResponse, CutInTheQuestionIsMalformed) {
  std::vector<uint8_t> whole = www_bytes(0).octets;  // 33 octets
  EXPECT_EQ("malformed(name_past_end)", parse({whole.begin(), whole.begin() + 12}));
  EXPECT_EQ("malformed(name_past_end)", parse({whole.begin(), whole.begin() + 20}));
  EXPECT_EQ("malformed(question_past_end)", parse({whole.begin(), whole.begin() + 29}));
  EXPECT_EQ("malformed(question_past_end)", parse({whole.begin(), whole.begin() + 32}));
  EXPECT_EQ("no_address", parse(whole));
}

/* A message cut anywhere inside an answer record is malformed, at every length */
TEST(DnsResponse, CutInAnAnswerIsMalformed) {
  std::vector<uint8_t> whole = www().a("www.example.com", "1.2.3.4").bytes();  // answer at 33..63
  std::string got;
  for (size_t cut = 33; cut < whole.size(); ++cut) {
    got += std::to_string(cut) + ":" + parse({whole.data(), whole.data() + cut}) + "\n";
  }
  std::string expected;
  for (size_t cut = 33; cut < whole.size(); ++cut) {
    const char* why = cut < 50 ? "name_past_end" : cut < 60 ? "record_past_end" : "rdata_past_end";
    expected += std::to_string(cut) + ":malformed(" + why + ")\n";
  }
  EXPECT_EQ(expected, got);
}

/* An RDLENGTH that runs past the end is malformed, even for a record we would ignore */
TEST(DnsResponse, RdlengthPastTheEndIsMalformed) {
  Bytes msg = www_bytes(1);
  msg.name("other.example").fixed(16, dns::class_in, 60, 10).u8(3).u8('a').u8('b').u8('c');
  EXPECT_EQ("malformed(rdata_past_end)", parse(msg.octets));
}

/* An A record is four octets: RDLENGTH 0, 3, 5 and 16 are rejected */
TEST(DnsResponse, ARecordOfTheWrongLengthIsMalformed) {
  std::string got;
  for (int length : {0, 3, 4, 5, 16}) {
    Bytes rdata;
    for (int i = 0; i < length; ++i) rdata.u8(static_cast<uint8_t>(i + 1));
    got += std::to_string(length) + ":" +
           parse(www().answer("www.example.com", dns::type_a, dns::class_in, 9, rdata).bytes()) + " ";
  }
  EXPECT_EQ(
      "0:malformed(a_rdlength) 3:malformed(a_rdlength) 4:ok [1.2.3.4] ttl=9 5:malformed(a_rdlength) "
      "16:malformed(a_rdlength) ",
      got);
}

/* A broken A record refuses the message even when it is for another name */
TEST(DnsResponse, ARecordOfTheWrongLengthForAnotherNameIsMalformed) {
  Packet p =
      www().a("www.example.com", "1.2.3.4").answer("other.example", dns::type_a, dns::class_in, 9, Bytes().u8(1));
  EXPECT_EQ("malformed(a_rdlength)", parse(p.bytes()));
}

/* Records of another class are not IN addresses: ignored, whatever their length */
TEST(DnsResponse, RecordOfAnotherClassIsIgnored) {
  Packet p = www().answer("www.example.com", dns::type_a, 3 /* CH */, 9, Bytes().u16(7).name("x"));
  EXPECT_EQ("no_address ignored=1", parse(p.bytes()));
}

/* Answers for another name are ignored */
TEST(DnsResponse, AnswerForAnotherNameIsIgnored) {
  EXPECT_EQ("no_address ignored=1", parse(www().a("evil.example", "6.6.6.6").bytes()));
  EXPECT_EQ("ok [1.2.3.4] ttl=300 ignored=1",
            parse(www().a("evil.example", "6.6.6.6").a("www.example.com", "1.2.3.4").bytes()));
}

/* Answers of another type are ignored: an AAAA only is no address */
TEST(DnsResponse, AnswerOfAnotherTypeIsIgnored) {
  Bytes aaaa;
  for (int i = 0; i < 16; ++i) aaaa.u8(0x20);
  EXPECT_EQ("no_address ignored=1", parse(www().answer("www.example.com", 28, dns::class_in, 60, aaaa).bytes()));
}

/* An owner with a NUL inside a label is another name, not a prefix of ours */
TEST(DnsResponse, OwnerWithANulInsideALabelIsAnotherName) {
  EXPECT_EQ("no_address ignored=1", parse(www().a("www\0.example.com"sv, "6.6.6.6").bytes()));
  EXPECT_EQ("no_address ignored=1", parse(www().a("www.exa\0mple.com"sv, "6.6.6.6").bytes()));
}

/* The root name is no host: as a question it is a mismatch, as an owner it is ignored */
TEST(DnsResponse, RootNameIsNotOurs) {
  EXPECT_EQ("question_mismatch", parse(Packet().question("").a("", "1.2.3.4").bytes()));
  EXPECT_EQ("no_address ignored=1", parse(www().a("", "1.2.3.4").bytes()));
}

/* A CNAME chain is followed in answer order to the addresses of its last name */
TEST(DnsResponse, CnameChainIsFollowedInOrder) {
  Packet p = www()
                 .cname("www.example.com", "a.example", 100)
                 .cname("A.EXAMPLE", "b.example", 50)
                 .a("b.example", "1.2.3.4", 200);
  EXPECT_EQ("ok [1.2.3.4] ttl=50 cnames=2", parse(p.bytes()));
}

/* Records that come before the CNAME that leads to them are not followed backwards */
TEST(DnsResponse, CnameChainOutOfOrderIsNotFollowed) {
  Packet p = www().a("b.example", "1.2.3.4").cname("www.example.com", "a.example").cname("a.example", "b.example");
  EXPECT_EQ("no_address cnames=2 ignored=1", parse(p.bytes()));
}

/* Once the name is a CNAME, addresses of the name itself are not the answer */
TEST(DnsResponse, AddressOfTheAliasAfterItsCnameIsIgnored) {
  Packet p = www().cname("www.example.com", "a.example").a("www.example.com", "6.6.6.6").a("a.example", "1.2.3.4");
  EXPECT_EQ("ok [1.2.3.4] ttl=300 cnames=1 ignored=1", parse(p.bytes()));
}

/* A CNAME and no address is no address */
TEST(DnsResponse, CnameWithoutAnAddressIsNoAddress) {
  EXPECT_EQ("no_address cnames=1", parse(www().cname("www.example.com", "a.example").bytes()));
}

/* A CNAME of another name is not part of the chain */
TEST(DnsResponse, CnameOfAnotherNameIsIgnored) {
  Packet p = www().cname("other.example", "a.example").a("www.example.com", "1.2.3.4").a("a.example", "6.6.6.6");
  EXPECT_EQ("ok [1.2.3.4] ttl=300 ignored=2", parse(p.bytes()));
}

/* A CNAME back into the chain is a loop, refused */
TEST(DnsResponse, CnameLoopIsMalformed) {
  EXPECT_EQ("malformed(cname_loop)", parse(www()
                                               .cname("www.example.com", "a.example")
                                               .cname("a.example", "WWW.example.com")
                                               .a("www.example.com", "1.2.3.4")
                                               .bytes()));
  EXPECT_EQ("malformed(cname_loop)", parse(www().cname("www.example.com", "www.example.com").bytes()));
}

/* Sixteen CNAMEs are followed; the seventeenth is refused */
TEST(DnsResponse, CnameChainLongerThan16IsMalformed) {
  Packet p = www().cname("www.example.com", "c1.example");
  for (int i = 1; i < 16; ++i) p.cname("c" + std::to_string(i) + ".example", "c" + std::to_string(i + 1) + ".example");
  EXPECT_EQ("ok [1.2.3.4] ttl=300 cnames=16", parse(Packet(p).a("c16.example", "1.2.3.4").bytes()));
  EXPECT_EQ("malformed(cname_chain_too_long)", parse(p.cname("c16.example", "c17.example").bytes()));
}

/* A CNAME's RDATA is exactly one name: trailing octets, or a name past the RDATA, are refused */
TEST(DnsResponse, CnameThatDoesNotFillItsRdataIsMalformed) {
  EXPECT_EQ(
      "malformed(cname_rdata)",
      parse(
          www().answer("www.example.com", dns::type_cname, dns::class_in, 9, Bytes().name("a.example").u8(0)).bytes()));
  Bytes msg = www_bytes(1);
  msg.pointer(12).fixed(dns::type_cname, dns::class_in, 9, 2).labels("a").u8(0);  // RDLENGTH 2, name of 3
  EXPECT_EQ("malformed(cname_rdata)", parse(msg.octets));
}

/* A CNAME target with a forward pointer is malformed like any name */
TEST(DnsResponse, CnameTargetWithAForwardPointerIsMalformed) {
  Bytes msg = www_bytes(1);
  msg.pointer(12).fixed(dns::type_cname, dns::class_in, 9, 2);
  msg.pointer(static_cast<uint16_t>(msg.size() + 2)).name("a.example");  // a valid name, but after the pointer
  EXPECT_EQ("malformed(pointer_forward)", parse(msg.octets));
}

/* Every checked header field is checked against the query */
TEST(DnsResponse, HeaderMismatchesAreNamed) {
  EXPECT_EQ("id_mismatch", parse(www().id(kId + 1).a("www.example.com", "1.2.3.4").bytes()));
  EXPECT_EQ("not_a_response", parse(www().flags(0x0100).a("www.example.com", "1.2.3.4").bytes()));
  EXPECT_EQ("opcode_mismatch", parse(www().flags(kResponse | 2 << 11).a("www.example.com", "1.2.3.4").bytes()));
}

/* The question must be ours: name, type and class */
TEST(DnsResponse, QuestionMismatchesAreNamed) {
  EXPECT_EQ("question_mismatch", parse(Packet().question("evil.example").a("evil.example", "6.6.6.6").bytes()));
  EXPECT_EQ("question_mismatch",
            parse(Packet().question("www.example.com", 28).a("www.example.com", "1.2.3.4").bytes()));
  Bytes chaos = Bytes().header(kId, kResponse, 1, 0).name("www.example.com").u16(dns::type_a).u16(3);
  EXPECT_EQ("question_mismatch", parse(chaos.octets));
  EXPECT_EQ("question_mismatch", parse(www().a("www.example.com", "1.2.3.4").bytes(), ask("www.example.com.evil")));
}

/* Each RCODE has its name; the raw value shows for the rest */
TEST(DnsResponse, RcodesAreNamed) {
  std::string got;
  for (int rcode : {1, 2, 3, 4, 5, 6, 9, 15}) got += parse(www().rcode(rcode).bytes()) + "; ";
  EXPECT_EQ(
      "formerr; servfail; nxdomain; notimp; refused; rcode_other rcode=6; rcode_other rcode=9; "
      "rcode_other rcode=15; ",
      got);
}

/* An error RCODE wins over any answer records that came with it */
TEST(DnsResponse, NxdomainWithAnswersIsNxdomain) {
  EXPECT_EQ("nxdomain", parse(www().rcode(3).a("www.example.com", "1.2.3.4").bytes()));
}

/* TC means incomplete: reported before the RCODE and before any record is read */
TEST(DnsResponse, TruncatedIsReportedFirst) {
  EXPECT_EQ("truncated", parse(www().tc().a("www.example.com", "1.2.3.4").bytes()));
  EXPECT_EQ("truncated", parse(www().tc().rcode(3).bytes()));
  EXPECT_EQ("truncated", parse(www().tc().a("www.example.com", "1.2.3.4").ancount(5).bytes()));
  dns_test::ExactCopy copy(www().tc().rcode(2).bytes());
  dns::Answer answer = dns::parse_response(copy.span(), ask());
  EXPECT_TRUE(answer.tc);
  EXPECT_EQ(2, answer.rcode);
}

/* The authority and additional sections are not read: their counts do not matter */
TEST(DnsResponse, AuthorityAndAdditionalSectionsAreNotRead) {
  std::vector<uint8_t> msg = www().a("www.example.com", "1.2.3.4").bytes();
  msg[8] = 0xFF;   // NSCOUNT
  msg[11] = 0x07;  // ARCOUNT
  EXPECT_EQ("ok [1.2.3.4] ttl=300", parse(msg));
}

/* Octets after the last answer record are not read */
TEST(DnsResponse, TrailingOctetsAreIgnored) {
  std::vector<uint8_t> msg = www().a("www.example.com", "1.2.3.4").bytes();
  msg.push_back(0xC0);
  EXPECT_EQ("ok [1.2.3.4] ttl=300", parse(msg));
}

/* Many records whose owner points at one long name: each is read, none is lost */
TEST(DnsResponse, ManyRecordsPointingAtOneLongNameAreRead) {
  std::string label(63, 'x');
  std::string longest = label + "." + label + "." + label + "." + std::string(61, 'y');
  constexpr int kCount = 2000;
  Bytes msg = Bytes().header(kId, kResponse, 1, kCount).question(longest);
  std::string expected = "ok [";
  for (int i = 0; i < kCount; ++i) {
    char quad[16];
    std::snprintf(quad, sizeof quad, "10.0.%d.%d", i / 256, i % 256);
    msg.pointer(12).fixed(dns::type_a, dns::class_in, 60, 4).addr(quad);
    expected += (i ? " " : "") + std::string(quad);
  }
  EXPECT_EQ(expected + "] ttl=60", parse(msg.octets, ask(longest)));
}

/* Every code has its own name */
TEST(DnsCodes, NamesAreDistinctAndStable) {
  std::string got;
  for (int code : {0,    -101, -102, -103, -104, -105, -106, -110, -111, -112, -113, -114,
                   -115, -116, -120, -121, -122, -200, -201, -202, -203, -1,   7}) {
    got += std::to_string(code) + "=" + dns::dns_error_name(code) + " ";
  }
  EXPECT_EQ(
      "0=ok -101=formerr -102=servfail -103=nxdomain -104=notimp -105=refused -106=rcode_other "
      "-110=malformed -111=id_mismatch -112=not_a_response -113=opcode_mismatch -114=question_mismatch "
      "-115=truncated -116=no_address -120=bad_name -121=frame_empty -122=frame_cut -200=no_server "
      "-201=closed -202=io_error -203=timeout -1=unknown 7=unknown ",
      got);
}

// Every fault has its name, the last one too; a value past the last is "unknown", never read past the table.
TEST(DnsCodes, FaultNamesEndAtTheLastFault) {
  EXPECT_STREQ(dns::fault_name(dns::Fault::header_short), "header_short");
  EXPECT_STREQ(dns::fault_name(dns::Fault::aaaa_rdlength), "aaaa_rdlength");
  auto past_last = static_cast<dns::Fault>(static_cast<uint8_t>(dns::Fault::aaaa_rdlength) + 1);
  EXPECT_STREQ(dns::fault_name(past_last), "unknown");
}

namespace {

Bytes six(const char* text) {
  in6_addr a{};
  inet_pton(AF_INET6, text, &a);
  Bytes b;
  b.octets.assign(a.s6_addr, a.s6_addr + 16);
  return b;
}

}  // namespace

/* A query of type AAAA keeps the AAAA records of the name, ignores its A records, and a wrong RDLENGTH is malformed */
TEST(DnsMessage, AaaaQueryKeepsAaaaRecordsOnly) {
  dns::Query asked = dns::build_query(kId, "www.example.com", dns::type_aaaa);
  Packet p = Packet().question("www.example.com", dns::type_aaaa);
  p.a("www.example.com", "1.2.3.4").answer("www.example.com", dns::type_aaaa, dns::class_in, 60, six("2001:db8::1"));
  p.answer("www.example.com", dns::type_aaaa, dns::class_in, 300, six("::ffff:127.0.0.1"));
  EXPECT_EQ("ok [2001:db8::1 ::ffff:127.0.0.1] ttl=60 ignored=1", parse(p.bytes(), asked));
  Packet bad = Packet().question("www.example.com", dns::type_aaaa);
  bad.answer("www.example.com", dns::type_aaaa, dns::class_in, 60, Bytes().addr("1.2.3.4"));
  EXPECT_EQ("malformed(aaaa_rdlength)", parse(bad.bytes(), asked));
  Packet only_a = Packet().question("www.example.com", dns::type_aaaa).a("www.example.com", "1.2.3.4");
  EXPECT_EQ("no_address ignored=1", parse(only_a.bytes(), asked));
}

/* A malformed answer carries no address, even the ones read before the broken record; no record kept: TTL 0 */
TEST(DnsResponse, MalformedAnswerKeepsNoAddressAndNoRecordMeansTtlZero) {
  Bytes msg = www_bytes(2);
  msg.name("www.example.com").fixed(dns::type_a, dns::class_in, 60, 4).addr("1.2.3.4");
  msg.name("www.example.com").fixed(dns::type_a, dns::class_in, 60, 3).u8(1).u8(2).u8(3);
  dns_test::ExactCopy broken(msg.octets);
  dns::Answer answer = dns::parse_response(broken.span(), ask());
  EXPECT_EQ(dns::malformed, answer.code);
  EXPECT_TRUE(answer.addrs.empty());
  EXPECT_TRUE(answer.addrs6.empty());
  Packet six_then_broken = Packet().question("www.example.com", dns::type_aaaa);
  six_then_broken.answer("www.example.com", dns::type_aaaa, dns::class_in, 60, six("2001:db8::1"));
  six_then_broken.answer("www.example.com", dns::type_aaaa, dns::class_in, 60, Bytes().addr("1.2.3.4"));
  dns_test::ExactCopy broken6(six_then_broken.bytes());
  answer = dns::parse_response(broken6.span(), dns::build_query(kId, "www.example.com", dns::type_aaaa));
  EXPECT_EQ(dns::malformed, answer.code);
  EXPECT_TRUE(answer.addrs6.empty());
  dns_test::ExactCopy none(www().bytes());
  answer = dns::parse_response(none.span(), ask());
  EXPECT_EQ(dns::no_address, answer.code);
  EXPECT_EQ(0u, answer.min_ttl);
}
