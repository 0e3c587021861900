# DNS sources of the client, listed once: client/ and fuzz/ both include this file.
# TLSNB_DNS_SOURCES: library sources (absolute). TLSNB_DNS_UNIT_TESTS: GoogleTest files (absolute).
set(TLSNB_DNS_SOURCES
  ${CMAKE_CURRENT_LIST_DIR}/dns_error.cc
  ${CMAKE_CURRENT_LIST_DIR}/dns_name.cc
  ${CMAKE_CURRENT_LIST_DIR}/dns_message.cc
  ${CMAKE_CURRENT_LIST_DIR}/dns_judge.cc
  ${CMAKE_CURRENT_LIST_DIR}/dns_judge6.cc
  ${CMAKE_CURRENT_LIST_DIR}/dns_stream.cc)
set(TLSNB_DNS_UNIT_TESTS
  ${CMAKE_CURRENT_LIST_DIR}/tests/dns_name_test.cc
  ${CMAKE_CURRENT_LIST_DIR}/tests/dns_message_test.cc
  ${CMAKE_CURRENT_LIST_DIR}/tests/dns_judge_test.cc
  ${CMAKE_CURRENT_LIST_DIR}/tests/dns_stream_test.cc)
