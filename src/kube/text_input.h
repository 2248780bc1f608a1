#pragma once
// Internal to src/kube: what turns a file's bytes into documents before YAML parsing: the
// encodings Windows tools write, and streams of concatenated JSON values.

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace zerodrop::kube::detail {

// Converts UTF-16 or UTF-32 text that starts with a byte order mark to UTF-8, in place (the
// mark dropped). Returns a one-line reason when the text cannot be read: an invalid sequence,
// or NUL bytes without a mark (UTF-16 saved without one). UTF-8 text is left as it is.
std::optional<std::string> decode_to_utf8(std::string& text);

// Whether `text` starts with a UTF-16 or UTF-32 byte order mark.
bool has_wide_bom(std::string_view text);

// The byte offsets at which the top-level values of a stream of concatenated JSON objects or
// arrays start ("{…}{…}", one per line as `kubectl get -o json` loops write them). Empty when
// the text is not such a stream of two or more values; then it is read as one document.
std::vector<size_t> json_value_starts(std::string_view text);

}  // namespace zerodrop::kube::detail
