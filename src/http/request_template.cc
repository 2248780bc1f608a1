#include "http/request_template.h"

#include <cstring>

#include <fmt/format.h>

#include "base/text.h"

namespace zerodrop::http {
namespace {

bool has_header(const RequestSpec& spec, std::string_view name) {
  for (const auto& [key, value] : spec.headers) {
    if (equals_ignore_case(key, name)) {
      return true;
    }
  }
  return false;
}

bool method_has_body(std::string_view method) {
  return method == "POST" || method == "PUT" || method == "PATCH";
}

}  // namespace

RequestTemplate::RequestTemplate(const RequestSpec& spec) {
  head_ = fmt::format("{} {} HTTP/1.1\r\n", spec.method, spec.target);
  if (!has_header(spec, "Host")) {
    head_ += fmt::format("Host: {}\r\n", spec.host_header);
  }
  if (!has_header(spec, "User-Agent")) {
    head_ += "User-Agent: zerodrop/0.1\r\n";
  }
  for (const auto& [name, value] : spec.headers) {
    head_ += fmt::format("{}: {}\r\n", name, value);
  }
  if ((spec.body_size > 0 || method_has_body(spec.method)) && !has_header(spec, "Content-Length")) {
    head_ += fmt::format("Content-Length: {}\r\n", spec.body_size);
  }
  if (spec.connection == ConnectionHeader::close) {
    head_ += "Connection: close\r\n";
  }
  head_ += kSeqHeader;
  head_ += ": ";
  seq_offset_ = head_.size();
  head_.append(kSeqWidth, ' ');
  head_ += "\r\n\r\n";
}

void RequestTemplate::write(char* out, uint64_t seq) const {
  std::memcpy(out, head_.data(), head_.size());
  write_seq(out + seq_offset_, seq);
}

void write_seq(char* slot, uint64_t seq) {
  char digits[RequestTemplate::kSeqWidth];
  size_t n = 0;
  do {
    digits[n++] = static_cast<char>('0' + seq % 10);
    seq /= 10;
  } while (seq != 0);
  for (size_t i = 0; i < n; ++i) {
    slot[i] = digits[n - 1 - i];
  }
  std::memset(slot + n, ' ', RequestTemplate::kSeqWidth - n);
}

}  // namespace zerodrop::http
