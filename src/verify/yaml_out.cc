#include "verify/yaml_out.h"

#include <yaml.h>

#include <algorithm>

#include <nlohmann/json.hpp>

#include "base/error.h"
#include "base/text.h"

namespace zerodrop::verify {

using Json = nlohmann::json;  // not `json`: other files of the unity build name variables so

namespace {

// Plain scalars YAML 1.1 or 1.2 would not read back as strings.
bool needs_quotes(const std::string& text) {
  static const char* const kWords[] = {"true", "false", "yes", "no",   "on",
                                       "off",  "y",     "n",   "null", "~"};
  std::string lower = ascii_lower(text);
  if (text.empty() || std::find(std::begin(kWords), std::end(kWords), lower) != std::end(kWords)) {
    return true;
  }
  Json parsed = Json::parse(text, nullptr, false);
  return !parsed.is_discarded() && !parsed.is_string();  // 12, 1.5, 1e3
}

class Emitter {
public:
  Emitter() {
    yaml_emitter_initialize(&emitter_);
    yaml_emitter_set_output(&emitter_, &Emitter::write, &out_);
    yaml_emitter_set_unicode(&emitter_, 1);
    yaml_emitter_set_width(&emitter_, -1);  // never fold a long string
  }

  ~Emitter() { yaml_emitter_delete(&emitter_); }

  Emitter(const Emitter&) = delete;
  Emitter& operator=(const Emitter&) = delete;

  std::string document(const Json& j) {
    yaml_event_t e;
    yaml_stream_start_event_initialize(&e, YAML_UTF8_ENCODING);
    emit(e);
    yaml_document_start_event_initialize(&e, nullptr, nullptr, nullptr, 1);
    emit(e);
    node(j);
    yaml_document_end_event_initialize(&e, 1);
    emit(e);
    yaml_stream_end_event_initialize(&e);
    emit(e);
    return out_;
  }

private:
  static int write(void* data, unsigned char* buffer, size_t size) {
    static_cast<std::string*>(data)->append(reinterpret_cast<char*>(buffer), size);
    return 1;
  }

  void emit(yaml_event_t& e) {
    if (!yaml_emitter_emit(&emitter_, &e)) {
      throw Error(std::string("cannot write YAML: ") + (emitter_.problem ? emitter_.problem : ""));
    }
  }

  void scalar(const std::string& text, yaml_scalar_style_t style) {
    yaml_event_t e;
    auto* bytes = reinterpret_cast<yaml_char_t*>(const_cast<char*>(text.data()));
    yaml_scalar_event_initialize(&e, nullptr, nullptr, bytes, static_cast<int>(text.size()), 1, 1,
                                 style);
    emit(e);
  }

  void node(const Json& j) {
    yaml_event_t e;
    if (j.is_object()) {
      yaml_mapping_start_event_initialize(&e, nullptr, nullptr, 1, YAML_BLOCK_MAPPING_STYLE);
      emit(e);
      for (const auto& [key, value] : j.items()) {
        scalar(key, needs_quotes(key) ? YAML_DOUBLE_QUOTED_SCALAR_STYLE : YAML_ANY_SCALAR_STYLE);
        node(value);
      }
      yaml_mapping_end_event_initialize(&e);
      emit(e);
    } else if (j.is_array()) {
      yaml_sequence_start_event_initialize(
          &e, nullptr, nullptr, 1,
          j.empty() ? YAML_FLOW_SEQUENCE_STYLE : YAML_BLOCK_SEQUENCE_STYLE);
      emit(e);
      for (const Json& item : j) {
        node(item);
      }
      yaml_sequence_end_event_initialize(&e);
      emit(e);
    } else if (j.is_string()) {
      const auto& text = j.get_ref<const std::string&>();
      scalar(text, needs_quotes(text) ? YAML_DOUBLE_QUOTED_SCALAR_STYLE : YAML_ANY_SCALAR_STYLE);
    } else {
      scalar(j.dump(), YAML_PLAIN_SCALAR_STYLE);  // numbers, true, false, null
    }
  }

  yaml_emitter_t emitter_{};
  std::string out_;
};

}  // namespace

std::string to_yaml(const Json& object) {
  return Emitter().document(object);
}

}  // namespace zerodrop::verify
