#include "lab/pods/spec.h"

#include <fmt/format.h>

#include "base/error.h"

namespace zerodrop::lab {
namespace {

std::string_view unquote(std::string_view text) {
  if (text.size() >= 2 && (text.front() == '\'' || text.front() == '"')
      && text.back() == text.front()) {
    return text.substr(1, text.size() - 2);
  }
  return text;
}

std::string join(const std::vector<std::string>& words) {
  std::string out;
  for (const std::string& w : words) {
    out += (out.empty() ? "" : " ") + w;
  }
  return out;
}

void replace_all(std::string& s, std::string_view from, const std::string& to) {
  for (size_t at = s.find(from); at != std::string::npos; at = s.find(from, at + to.size())) {
    s.replace(at, from.size(), to);
  }
}

}  // namespace

std::string HookSpec::describe() const {
  switch (kind) {
    case Kind::none:
      return "none";
    case Kind::sleep:
      return "sleep:" + format_duration(sleep);
    case Kind::exec:
      return "exec:" + join(command);
    case Kind::http:
      return "http:" + path;
  }
  return "none";
}

std::string ProbeSpec::describe() const {
  switch (kind) {
    case Kind::none:
      return "none";
    case Kind::tcp:
      return "tcp";
    case Kind::exec:
      return "exec:" + join(command);
    case Kind::http:
      return "http:" + path;
    case Kind::grpc:
      return service.empty() ? "grpc" : "grpc:" + service;
  }
  return "none";
}

std::vector<std::string> split_command(std::string_view text, std::string_view what) {
  std::vector<std::string> words;
  std::string word;
  bool in_word = false;
  char quote = 0;
  for (char c : text) {
    if (quote != 0) {
      if (c == quote) {
        quote = 0;
      } else {
        word += c;
      }
    } else if (c == '\'' || c == '"') {
      quote = c;
      in_word = true;
    } else if (c == ' ' || c == '\t') {
      if (in_word) {
        words.push_back(std::move(word));
        word.clear();
        in_word = false;
      }
    } else {
      word += c;
      in_word = true;
    }
  }
  if (quote != 0) {
    throw Error(fmt::format("{}: unterminated quote in '{}'", what, text));
  }
  if (in_word) {
    words.push_back(std::move(word));
  }
  if (words.empty()) {
    throw Error(fmt::format("{}: empty command", what));
  }
  return words;
}

HookSpec parse_hook(std::string_view text, std::string_view what) {
  HookSpec hook;
  if (text == "none" || text.empty()) {
    return hook;
  }
  if (text.starts_with("sleep:")) {
    hook.kind = HookSpec::Kind::sleep;
    hook.sleep = parse_duration(text.substr(6), what);
  } else if (text.starts_with("exec:")) {
    hook.kind = HookSpec::Kind::exec;
    hook.command = split_command(unquote(text.substr(5)), what);
  } else if (text.starts_with("http:") && text.size() > 5 && text[5] == '/') {
    hook.kind = HookSpec::Kind::http;
    hook.path = std::string(text.substr(5));
  } else {
    throw Error(fmt::format(
        "{}: expected none, sleep:DURATION, exec:'command args' or http:/path, got '{}'", what,
        text));
  }
  return hook;
}

ProbeSpec parse_probe(std::string_view text, std::string_view what) {
  ProbeSpec probe;
  if (text == "none") {
    return probe;
  }
  if (text == "tcp") {
    probe.kind = ProbeSpec::Kind::tcp;
  } else if (text.starts_with("exec:")) {
    probe.kind = ProbeSpec::Kind::exec;
    probe.command = split_command(unquote(text.substr(5)), what);
  } else if (text.starts_with("http:") && text.size() > 5 && text[5] == '/') {
    probe.kind = ProbeSpec::Kind::http;
    probe.path = std::string(text.substr(5));
  } else if (text == "grpc" || (text.starts_with("grpc:") && text.size() > 5)) {
    probe.kind = ProbeSpec::Kind::grpc;
    probe.service = text == "grpc" ? "" : std::string(text.substr(5));
  } else {
    throw Error(fmt::format(
        "{}: expected http:/path, tcp, exec:'command args', grpc[:SERVICE] or none, got '{}'", what,
        text));
  }
  return probe;
}

std::vector<std::string> expand_template(const std::vector<std::string>& argv,
                                         const std::string& ip, uint16_t port,
                                         const std::string& name) {
  std::vector<std::string> out = argv;
  for (std::string& a : out) {
    replace_all(a, "{port}", std::to_string(port));
    replace_all(a, "{ip}", ip);
    replace_all(a, "{name}", name);
  }
  return out;
}

}  // namespace zerodrop::lab
