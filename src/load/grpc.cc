#include "load/grpc.h"

#include <algorithm>
#include <cctype>
#include <charconv>

#include <fmt/format.h>

#include "base/error.h"
#include "base/text.h"

namespace zerodrop::load {
namespace {

bool is_name_char(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.';
}

int hex_value(char c) {
  if (c >= '0' && c <= '9') {
    return c - '0';
  }
  c = ascii_lower(c);
  return c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

std::optional<int> grpc_status_of(std::string_view item) {
  int code = -1;
  auto [end, ec] = std::from_chars(item.data(), item.data() + item.size(), code);
  if (ec == std::errc() && end == item.data() + item.size() && code >= 0 && code < 100) {
    return code;
  }
  std::string upper(item);
  std::transform(upper.begin(), upper.end(), upper.begin(),
                 [](unsigned char c) { return static_cast<char>(std::toupper(c)); });
  auto it = std::find(kGrpcStatusNames.begin(), kGrpcStatusNames.end(), upper);
  if (it == kGrpcStatusNames.end()) {
    return std::nullopt;
  }
  return static_cast<int>(it - kGrpcStatusNames.begin());
}

}  // namespace

std::string grpc_path(std::string_view method) {
  std::string_view m = method;
  if (!m.empty() && m.front() == '/') {
    m.remove_prefix(1);
  }
  size_t slash = m.find('/');
  size_t split = slash != std::string_view::npos ? slash : m.rfind('.');
  std::string_view service = m.substr(0, std::min(split, m.size()));
  std::string_view name = split == std::string_view::npos ? "" : m.substr(split + 1);
  bool valid = !service.empty() && !name.empty()
               && std::all_of(service.begin(), service.end(), is_name_char)
               && std::all_of(name.begin(), name.end(), is_name_char)
               && name.find('.') == std::string_view::npos;
  if (!valid) {
    throw Error(fmt::format(
        "--grpc: expected SERVICE/METHOD such as helloworld.Greeter/SayHello, got '{}'", method));
  }
  return fmt::format("/{}/{}", service, name);
}

std::string grpc_frame(std::string_view message) {
  std::string out(5, '\0');
  auto n = static_cast<uint32_t>(message.size());
  out[1] = static_cast<char>(n >> 24);
  out[2] = static_cast<char>(n >> 16);
  out[3] = static_cast<char>(n >> 8);
  out[4] = static_cast<char>(n);
  out.append(message);
  return out;
}

std::vector<int> parse_grpc_statuses(std::string_view list) {
  std::vector<int> out;
  while (true) {
    size_t comma = list.find(',');
    std::string_view item = list.substr(0, comma);
    std::optional<int> code = grpc_status_of(item);
    if (!code) {
      throw Error(fmt::format(
          "--ok-grpc-status: '{}' is not a gRPC status (a number, or a name such as NOT_FOUND)",
          item));
    }
    out.push_back(*code);
    if (comma == std::string_view::npos) {
      return out;
    }
    list.remove_prefix(comma + 1);
  }
}

record::Outcome outcome_of_grpc_status(int status) {
  switch (status) {
    case 1:
      return record::Outcome::grpc_cancelled;
    case 4:
      return record::Outcome::grpc_deadline_exceeded;
    case 13:
      return record::Outcome::grpc_internal;
    case 14:
      return record::Outcome::grpc_unavailable;
    default:
      return record::Outcome::grpc_other;
  }
}

void percent_decode(std::string_view in, std::string& out, size_t max) {
  for (size_t i = 0; i < in.size() && out.size() < max; ++i) {
    int high = 0;
    int low = 0;
    if (in[i] == '%' && i + 2 < in.size() && (high = hex_value(in[i + 1])) >= 0
        && (low = hex_value(in[i + 2])) >= 0) {
      out.push_back(static_cast<char>(high * 16 + low));
      i += 2;
    } else {
      out.push_back(in[i]);
    }
  }
}

void GrpcFraming::feed(const uint8_t* data, size_t n) {
  while (n > 0 && !bad_) {
    if (remaining_ > 0) {
      size_t take = static_cast<size_t>(std::min<uint64_t>(remaining_, n));
      remaining_ -= take;
      data += take;
      n -= take;
      continue;
    }
    header_[header_seen_++] = *data++;
    --n;
    if (header_seen_ == header_.size()) {
      header_seen_ = 0;
      bad_ = header_[0] > 1;  // the compressed flag is 0 or 1; anything else is not gRPC
      remaining_ = (uint64_t{header_[1]} << 24) | (uint64_t{header_[2]} << 16)
                   | (uint64_t{header_[3]} << 8) | header_[4];
    }
  }
}

}  // namespace zerodrop::load
