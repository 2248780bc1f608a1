#include "http/response_parser.h"

#include <algorithm>
#include <cstring>

#include "base/text.h"

namespace zerodrop::http {
namespace {

bool is_ows(char c) {
  return c == ' ' || c == '\t';
}

std::string_view trim_ows(std::string_view s) {
  while (!s.empty() && is_ows(s.front())) {
    s.remove_prefix(1);
  }
  while (!s.empty() && is_ows(s.back())) {
    s.remove_suffix(1);
  }
  return s;
}

// RFC 9110 token characters, for header names.
bool is_token_char(char c) {
  if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')) {
    return true;
  }
  return std::strchr("!#$%&'*+-.^_`|~", c) != nullptr && c != '\0';
}

int hex_value(char c) {
  if (c >= '0' && c <= '9') {
    return c - '0';
  }
  c = static_cast<char>(c | 0x20);
  return (c >= 'a' && c <= 'f') ? c - 'a' + 10 : -1;
}

// Calls `each` with every comma-separated, trimmed element of a header value.
template <typename Each>
void for_each_token(std::string_view value, Each each) {
  while (!value.empty()) {
    size_t comma = value.find(',');
    std::string_view token = trim_ows(value.substr(0, comma));
    if (!token.empty()) {
      each(token);
    }
    if (comma == std::string_view::npos) {
      break;
    }
    value.remove_prefix(comma + 1);
  }
}

}  // namespace

ResponseParser::ResponseParser(std::string_view capture_header, ParserLimits limits)
    : ResponseParser(std::array<std::string_view, kMaxCaptures>{capture_header, {}}, limits) {}

ResponseParser::ResponseParser(std::array<std::string_view, kMaxCaptures> capture_headers,
                               ParserLimits limits)
    : limits_(limits) {
  for (size_t i = 0; i < kMaxCaptures; ++i) {
    capture_names_[i] = capture_headers[i];
    captured_[i].reserve(limits_.max_capture);
  }
  error_body_.reserve(limits_.max_error_body);
}

void ResponseParser::reset(BodyAllowed body) {
  for (std::string& value : captured_) {
    value.clear();  // keeps its capacity: no allocation per response
  }
  error_body_.clear();
  error_ = "";
  bytes_ = remaining_ = content_length_ = 0;
  header_bytes_ = header_count_ = 0;
  status_ = 0;
  phase_ = Phase::status_line;
  state_ = State::incomplete;
  body_ = body;
  keep_alive_ = true;
  has_content_length_ = chunked_ = other_encoding_ = http10_ = close_seen_ = false;
}

size_t ResponseParser::feed(std::string_view data) {
  size_t pos = 0;
  while (pos < data.size() && state_ == State::incomplete) {
    std::string_view rest = data.substr(pos);
    size_t used = 0;
    switch (phase_) {
      case Phase::body_length:
      case Phase::chunk_data:
        used = static_cast<size_t>(std::min<uint64_t>(remaining_, rest.size()));
        keep_error_body(rest.substr(0, used));
        remaining_ -= used;
        if (remaining_ == 0) {
          phase_ == Phase::body_length ? complete() : void(phase_ = Phase::chunk_end);
        }
        break;
      case Phase::body_until_close:
        used = rest.size();
        keep_error_body(rest);
        break;
      default:
        used = feed_line(rest);
        if (used == 0) {
          bytes_ += pos;
          return pos;
        }
        break;
    }
    pos += used;
  }
  bytes_ += pos;
  return pos;
}

void ResponseParser::keep_error_body(std::string_view bytes) {
  if (status_ < 400 || error_body_.size() >= limits_.max_error_body) {
    return;  // the common case costs one comparison
  }
  error_body_.append(bytes.substr(0, limits_.max_error_body - error_body_.size()));
}

size_t ResponseParser::feed_line(std::string_view data) {
  const void* newline = std::memchr(data.data(), '\n', data.size());
  if (newline == nullptr) {
    if (data.size() > limits_.max_line) {
      fail("line too long");
    }
    return 0;
  }
  size_t length = static_cast<size_t>(static_cast<const char*>(newline) - data.data());
  if (length > limits_.max_line) {
    fail("line too long");
    return length + 1;
  }
  if (phase_ == Phase::status_line || phase_ == Phase::header || phase_ == Phase::trailer) {
    header_bytes_ += length + 1;
    if (header_bytes_ > limits_.max_header_bytes) {
      fail("header block too large");
      return length + 1;
    }
  }
  std::string_view line = data.substr(0, length);
  if (!line.empty() && line.back() == '\r') {
    line.remove_suffix(1);
  }
  on_line(line);
  return length + 1;
}

void ResponseParser::on_line(std::string_view line) {
  switch (phase_) {
    case Phase::status_line:
      on_status_line(line);
      break;
    case Phase::header:
      on_header(line);
      break;
    case Phase::chunk_size:
      on_chunk_size(line);
      break;
    case Phase::chunk_end:
      line.empty() ? void(phase_ = Phase::chunk_size) : fail("chunk not followed by CRLF");
      break;
    case Phase::trailer:
      if (line.empty()) {
        complete();
      } else if (line.find(':') == std::string_view::npos) {
        fail("malformed trailer field");
      }
      break;
    default:
      break;
  }
}

void ResponseParser::on_status_line(std::string_view line) {
  // HTTP-version SP 3DIGIT [SP reason-phrase]
  if (line.size() < 12 || line.substr(0, 7) != "HTTP/1." || line[7] < '0' || line[7] > '9'
      || line[8] != ' ') {
    fail("malformed status line");
    return;
  }
  int status = 0;
  for (size_t i = 9; i < 12; ++i) {
    if (line[i] < '0' || line[i] > '9') {
      fail("malformed status code");
      return;
    }
    status = status * 10 + (line[i] - '0');
  }
  if (status < 100 || status > 599 || (line.size() > 12 && line[12] != ' ')) {
    fail("malformed status code");
    return;
  }
  status_ = status;
  http10_ = line[7] == '0';
  keep_alive_ = !http10_;
  phase_ = Phase::header;
}

void ResponseParser::on_header(std::string_view line) {
  if (line.empty()) {
    on_header_end();
    return;
  }
  if (++header_count_ > limits_.max_headers) {
    fail("too many header fields");
    return;
  }
  if (is_ows(line.front())) {
    fail("obsolete header line folding");
    return;
  }
  size_t colon = line.find(':');
  if (colon == std::string_view::npos || colon == 0) {
    fail("malformed header field");
    return;
  }
  std::string_view name = line.substr(0, colon);
  if (!std::all_of(name.begin(), name.end(), is_token_char)) {
    fail("malformed header name");
    return;
  }
  on_field(name, trim_ows(line.substr(colon + 1)));
}

void ResponseParser::on_field(std::string_view name, std::string_view value) {
  for (size_t i = 0; i < kMaxCaptures; ++i) {
    if (!capture_names_[i].empty() && equals_ignore_case(name, capture_names_[i])) {
      captured_[i].assign(value.substr(0, limits_.max_capture));
    }
  }
  if (equals_ignore_case(name, "content-length")) {
    uint64_t length = 0;
    if (value.empty() || value.size() > 18
        || !std::all_of(value.begin(), value.end(), [](char c) { return c >= '0' && c <= '9'; })) {
      fail("malformed content-length");
      return;
    }
    for (char c : value) {
      length = length * 10 + static_cast<uint64_t>(c - '0');
    }
    if (has_content_length_ && length != content_length_) {
      fail("conflicting content-length");
      return;
    }
    has_content_length_ = true;
    content_length_ = length;
  } else if (equals_ignore_case(name, "transfer-encoding")) {
    // Only the last coding decides whether the body is chunked (RFC 9112 6.3).
    for_each_token(
        value, [&](std::string_view coding) { chunked_ = equals_ignore_case(coding, "chunked"); });
    other_encoding_ = !chunked_;
  } else if (equals_ignore_case(name, "connection")) {
    for_each_token(value, [&](std::string_view option) {
      if (equals_ignore_case(option, "close")) {
        close_seen_ = true;
        keep_alive_ = false;
      } else if (equals_ignore_case(option, "keep-alive") && !close_seen_) {
        keep_alive_ = true;
      }
    });
  }
}

void ResponseParser::on_header_end() {
  if (status_ < 200) {
    if (status_ == 101) {
      fail("unexpected 101 switching protocols");
      return;
    }
    // An interim response (100 Continue, 103 Early Hints): the final one follows.
    phase_ = Phase::status_line;
    has_content_length_ = chunked_ = other_encoding_ = close_seen_ = false;
    header_count_ = 0;
    return;
  }
  if (body_ == BodyAllowed::no || status_ == 204 || status_ == 304) {
    complete();
  } else if (chunked_) {
    phase_ = Phase::chunk_size;
  } else if (other_encoding_ || !has_content_length_) {
    phase_ = Phase::body_until_close;  // the body ends when the server closes
    keep_alive_ = false;
  } else if (content_length_ == 0) {
    complete();
  } else {
    remaining_ = content_length_;
    phase_ = Phase::body_length;
  }
}

void ResponseParser::on_chunk_size(std::string_view line) {
  uint64_t size = 0;
  size_t digits = 0;
  for (; digits < line.size() && hex_value(line[digits]) >= 0; ++digits) {
    if (digits == 15) {
      fail("chunk size too large");
      return;
    }
    size = size * 16 + static_cast<uint64_t>(hex_value(line[digits]));
  }
  std::string_view rest = trim_ows(line.substr(digits));
  if (digits == 0 || (!rest.empty() && rest.front() != ';')) {
    fail("malformed chunk size");
    return;
  }
  if (size == 0) {
    phase_ = Phase::trailer;
  } else {
    remaining_ = size;
    phase_ = Phase::chunk_data;
  }
}

ResponseParser::State ResponseParser::finish() {
  if (state_ == State::incomplete && phase_ == Phase::body_until_close) {
    complete();
  }
  return state_;
}

void ResponseParser::fail(const char* why) {
  error_ = why;
  state_ = State::failed;
}

void ResponseParser::complete() {
  phase_ = Phase::complete;
  state_ = State::done;
}

}  // namespace zerodrop::http
