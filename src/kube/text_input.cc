#include "kube/text_input.h"

#include <cstdint>

#include <fmt/format.h>

namespace zerodrop::kube::detail {
namespace {

enum class Width { utf16, utf32 };
enum class Order { little, big };

void append_utf8(std::string& out, uint32_t cp) {
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xC0 | cp >> 6);
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xE0 | cp >> 12);
    out += static_cast<char>(0x80 | (cp >> 6 & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | cp >> 18);
    out += static_cast<char>(0x80 | (cp >> 12 & 0x3F));
    out += static_cast<char>(0x80 | (cp >> 6 & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  }
}

uint32_t unit_at(std::string_view text, size_t at, size_t size, Order order) {
  uint32_t v = 0;
  for (size_t i = 0; i < size; ++i) {
    size_t k = order == Order::little ? size - 1 - i : i;
    v = v << 8 | static_cast<unsigned char>(text[at + k]);
  }
  return v;
}

std::optional<std::string> decode(std::string& text, Width width, Order order) {
  size_t unit = width == Width::utf16 ? 2 : 4;
  std::string_view name = width == Width::utf16 ? "UTF-16" : "UTF-32";
  if (text.size() % unit != 0) {
    return fmt::format("{} text with a byte order mark ends in the middle of a character", name);
  }
  std::string out;
  out.reserve(text.size() / unit);
  for (size_t at = unit; at < text.size(); at += unit) {
    uint32_t cp = unit_at(text, at, unit, order);
    if (width == Width::utf16 && cp >= 0xD800 && cp < 0xDC00 && at + 2 < text.size()) {
      uint32_t low = unit_at(text, at + 2, 2, order);
      if (low >= 0xDC00 && low < 0xE000) {
        cp = 0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00);
        at += 2;
      }
    }
    if ((cp >= 0xD800 && cp < 0xE000) || cp > 0x10FFFF) {
      return fmt::format("invalid {} character at byte {}", name, at);
    }
    append_utf8(out, cp);
  }
  text = std::move(out);
  return std::nullopt;
}

// The end of the JSON value starting at `at` (an object or array), or npos if it never closes.
size_t json_value_end(std::string_view text, size_t at) {
  int depth = 0;
  bool in_string = false;
  for (size_t i = at; i < text.size(); ++i) {
    char c = text[i];
    if (in_string) {
      if (c == '\\') {
        ++i;
      } else if (c == '"') {
        in_string = false;
      }
    } else if (c == '"') {
      in_string = true;
    } else if (c == '{' || c == '[') {
      ++depth;
    } else if ((c == '}' || c == ']') && --depth == 0) {
      return i + 1;
    }
  }
  return std::string_view::npos;
}

}  // namespace

bool has_wide_bom(std::string_view text) {
  return text.starts_with("\xFF\xFE") || text.starts_with("\xFE\xFF")
         || text.starts_with(std::string_view("\0\0\xFE\xFF", 4));
}

std::optional<std::string> decode_to_utf8(std::string& text) {
  std::string_view view = text;
  if (view.starts_with(std::string_view("\xFF\xFE\0\0", 4))) {
    return decode(text, Width::utf32, Order::little);
  }
  if (view.starts_with(std::string_view("\0\0\xFE\xFF", 4))) {
    return decode(text, Width::utf32, Order::big);
  }
  if (view.starts_with("\xFF\xFE")) {
    return decode(text, Width::utf16, Order::little);
  }
  if (view.starts_with("\xFE\xFF")) {
    return decode(text, Width::utf16, Order::big);
  }
  if (view.find('\0') != std::string_view::npos) {
    return "holds NUL bytes: UTF-16 or UTF-32 without a byte order mark? Save it as UTF-8";
  }
  return std::nullopt;
}

std::vector<size_t> json_value_starts(std::string_view text) {
  constexpr std::string_view kBlank = " \t\r\n";
  std::vector<size_t> starts;
  size_t at = text.find_first_not_of(kBlank);
  while (at != std::string_view::npos) {
    if (text[at] != '{' && text[at] != '[') {
      return {};  // not (only) JSON values: YAML reads it, and reports what is wrong
    }
    size_t end = json_value_end(text, at);
    if (end == std::string_view::npos) {
      return {};
    }
    starts.push_back(at);
    at = text.find_first_not_of(kBlank, end);
  }
  return starts.size() >= 2 ? starts : std::vector<size_t>{};
}

}  // namespace zerodrop::kube::detail
