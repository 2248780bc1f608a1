#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace zerodrop::http {

// Bounds that keep a hostile server from growing the client's memory or time per byte.
struct ParserLimits {
  size_t max_line = 8 * 1024;           // status line, one header line, one chunk-size line
  size_t max_header_bytes = 64 * 1024;  // the whole header block, interim responses and trailers
  size_t max_headers = 256;             // header fields in one block
  size_t max_capture = 256;             // the captured header's value is cut to this length
  size_t max_error_body = 256;          // an error response's body is kept up to this length
};

// Whether the request was HEAD (its response has headers only).
enum class BodyAllowed { yes, no };

// An incremental HTTP/1.1 response parser that copies nothing but the one header value it
// captures. Written by hand rather than using Beast's parser because Beast allocates per message
// (its basic_fields map) and buffers headers; this one keeps no state but a few integers, so a
// connection parses millions of responses without touching the heap. Handles status line,
// headers, interim 1xx responses, Content-Length, chunked (with trailers) and close-delimited
// bodies. Not thread-safe; one per connection.
class ResponseParser {
public:
  enum class State : uint8_t { incomplete, done, failed };

  static constexpr size_t kMaxCaptures = 2;

  // `capture_header` names the header whose value is kept (case-insensitive; empty = none).
  explicit ResponseParser(std::string_view capture_header = {}, ParserLimits limits = {});
  // Keeps the values of up to kMaxCaptures headers; captured(i) is the value of the i-th.
  explicit ResponseParser(std::array<std::string_view, kMaxCaptures> capture_headers,
                          ParserLimits limits = {});

  // Prepares for the next response on the connection.
  void reset(BodyAllowed body = BodyAllowed::yes);

  // Consumes a prefix of `data` and returns its length. An incomplete line is left unconsumed:
  // the caller keeps those bytes and calls again with more appended. A line longer than the
  // limit fails the parse, so the caller's buffer never needs more than max_line + 1 bytes.
  size_t feed(std::string_view data);

  // The peer closed the connection: completes a close-delimited body. Returns state().
  State finish();

  State state() const { return state_; }

  bool started() const { return bytes_ > 0; }  // some response bytes were seen

  bool headers_done() const { return phase_ >= Phase::body_length; }

  int status() const { return status_; }

  bool keep_alive() const { return keep_alive_; }  // the server allows another request

  // The value of the `i`-th captured header in the latest response, empty when it had none.
  std::string_view captured(size_t i = 0) const { return captured_[i]; }

  std::string_view error() const { return error_; }  // why it failed, for the record

  // The first bytes (ParserLimits::max_error_body) of the latest response's body when its status
  // is 400 or more, as received (chunk framing left out); empty otherwise. What the server said
  // went wrong, e.g. a database's error.
  std::string_view error_body() const { return error_body_; }

  uint64_t bytes() const { return bytes_; }

private:
  enum class Phase : uint8_t {
    status_line,
    header,
    body_length,  // phases from here on are past the header block
    chunk_size,
    chunk_data,
    chunk_end,
    trailer,
    body_until_close,
    complete,
  };

  size_t feed_line(std::string_view data);
  void on_line(std::string_view line);
  void on_status_line(std::string_view line);
  void on_header(std::string_view line);
  void on_field(std::string_view name, std::string_view value);
  void on_header_end();
  void on_chunk_size(std::string_view line);
  void fail(const char* why);
  void complete();
  void keep_error_body(std::string_view bytes);

  std::array<std::string, kMaxCaptures> capture_names_;
  ParserLimits limits_;
  std::array<std::string, kMaxCaptures> captured_;
  std::string error_body_;
  const char* error_ = "";
  uint64_t bytes_ = 0;
  uint64_t remaining_ = 0;  // body or chunk bytes still to come
  uint64_t content_length_ = 0;
  size_t header_bytes_ = 0;
  size_t header_count_ = 0;
  int status_ = 0;
  Phase phase_ = Phase::status_line;
  State state_ = State::incomplete;
  BodyAllowed body_ = BodyAllowed::yes;
  bool keep_alive_ = true;
  bool has_content_length_ = false;
  bool chunked_ = false;
  bool other_encoding_ = false;
  bool http10_ = false;
  bool close_seen_ = false;
};

}  // namespace zerodrop::http
