// The fuzzer's input copied to the heap, exactly as long as it is: a read one octet past
// the end is an ASan report, not a quiet read of libFuzzer's own buffer.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>

#include "dns_name.h"

class ExactInput {
 public:
  ExactInput(const uint8_t* data, size_t size) : data_(new uint8_t[size]), size_(size) {
    if (size > 0) std::memcpy(data_.get(), data, size);
  }
  dns::Span span() const { return {data_.get(), size_}; }

 private:
  std::unique_ptr<uint8_t[]> data_;
  size_t size_;
};
