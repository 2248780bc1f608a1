#pragma once
// The load flags that zerodrop load, lab, verify and verify-agent share: one declaration, help
// text and validation each, so that a flag reads and fails the same in every command.
#include <string>
#include <string_view>
#include <vector>

namespace CLI {
class App;
}  // namespace CLI

namespace zerodrop::load {
struct Options;
}  // namespace zerodrop::load

namespace zerodrop::cli {

// The shared flags a command may declare beyond --rate and --timeout (every one has those); a
// set, combined with |.
enum class LoadFlag : unsigned {
  none = 0,
  connections = 1U << 0,     // -c, --connections
  client_retry = 1U << 1,    // --client-retry
  method = 1U << 2,          // --method
  header = 1U << 3,          // -H, --header
  backend_header = 1U << 4,  // --backend-header
  ok_status = 1U << 5,       // --ok-status
  http2 = 1U << 6,           // --http2, --grpc, --body-file, --streams
};

constexpr LoadFlag operator|(LoadFlag a, LoadFlag b) {
  return static_cast<LoadFlag>(static_cast<unsigned>(a) | static_cast<unsigned>(b));
}

constexpr bool includes(LoadFlag set, LoadFlag flag) {
  return (static_cast<unsigned>(set) & static_cast<unsigned>(flag)) != 0;
}

// What a command declares, with the help of the flags whose meaning is its own. An empty
// keepalive or fresh_name leaves that flag out (the command declares its own, or none).
struct LoadFlagSet {
  LoadFlag flags = LoadFlag::none;
  std::string_view rate;        // --rate's help: what the rate is spread over
  std::string_view keepalive;   // --keepalive,!--no-keepalive's help (it names the default)
  std::string_view fresh_name;  // --fresh-share (load, lab) or --fresh (verify)
  std::string_view fresh;       // its help
};

// The values as text, converted by apply_load_flags so that errors name the flag. A command sets
// its defaults before add_load_flags, which shows them in --help.
struct LoadFlags {
  std::string rate;
  std::string connections = "64";
  bool keepalive = true;
  std::string fresh_share = "0%";
  bool client_retry = false;
  std::string method = "GET";
  std::vector<std::string> headers;
  std::string timeout = "10s";
  std::string backend_header = "X-Pod-Name";
  std::string ok_status = "200-399";
  bool http2 = false;
  std::string grpc;
  std::string body_file;
  std::string streams = "100";
  // Filled by add_load_flags and the parse.
  LoadFlagSet declared;
  bool connections_given = false;
  bool method_given = false;
};

// Declares on `app` the flags of `set`, bound to `f` (which must outlive the parse).
void add_load_flags(CLI::App& app, LoadFlags& f, const LoadFlagSet& set);

// Converts the declared flags into `o`, leaving what a command did not declare as it is: with
// --http2 or --grpc, also the protocol, 8 connections unless -c was given, and the streams.
// Throws Error naming the flag whose value is bad.
void apply_load_flags(const LoadFlags& f, load::Options& o);

}  // namespace zerodrop::cli
