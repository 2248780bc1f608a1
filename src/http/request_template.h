#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace zerodrop::http {

enum class ConnectionHeader { keep_alive, close };

// What a request template is built from.
struct RequestSpec {
  std::string method = "GET";
  std::string target = "/";  // origin-form: "/path?query"
  std::string host_header;
  std::vector<std::pair<std::string, std::string>> headers;  // user headers, in order
  size_t body_size = 0;  // the body travels separately (a shared buffer), not in the head
  ConnectionHeader connection = ConnectionHeader::keep_alive;
};

// A pre-serialized HTTP/1.1 request head with a fixed-width slot for the X-Zerodrop-Seq value,
// so that sending a request costs one memcpy and a few digit writes, never an allocation.
// The slot is right-padded with spaces, which HTTP/1.1 parsers strip as optional whitespace.
class RequestTemplate {
public:
  static constexpr size_t kSeqWidth = 20;  // digits of the largest uint64_t
  static constexpr std::string_view kSeqHeader = "X-Zerodrop-Seq";

  // Serializes the head. Adds Host (unless given), User-Agent (unless given), Content-Length
  // (when there is a body or the method usually has one), Connection and the sequence header.
  explicit RequestTemplate(const RequestSpec& spec);

  std::string_view head() const { return head_; }

  size_t size() const { return head_.size(); }

  // Copies the head into `out` (at least size() bytes) with `seq` in the sequence slot.
  void write(char* out, uint64_t seq) const;

private:
  std::string head_;
  size_t seq_offset_ = 0;
};

// Writes `seq` in decimal, right-padded with spaces to kSeqWidth characters, at `slot`.
void write_seq(char* slot, uint64_t seq);

}  // namespace zerodrop::http
