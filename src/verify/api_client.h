#pragma once

#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>

namespace zerodrop::verify {

// An HTTP answer of the API server (or of the kubectl proxy in front of it).
struct ApiResponse {
  int status = 0;
  std::string body;

  bool ok() const { return status >= 200 && status < 300; }
};

enum class Method { get, post, put, patch, remove };  // remove: DELETE

// Ends a stream from another thread: cancel() shuts its connection down, so the blocked read
// returns. Thread-safe; a cancelled handle stays cancelled.
class Cancel {
public:
  void cancel();
  bool cancelled() const;

private:
  friend class ApiClient;
  // Returns false when already cancelled (the stream must not start).
  bool attach(int fd);
  void detach();

  mutable std::mutex mutex_;
  int fd_ = -1;
  bool cancelled_ = false;
};

// A small HTTP/1.1 client of the Kubernetes API over a unix socket (kubectl proxy's), one
// connection per request. Thread-safe: it holds only the socket path.
class ApiClient {
public:
  explicit ApiClient(std::string socket_path) : socket_path_(std::move(socket_path)) {}

  // One request and its whole answer. Throws Error "cannot reach the API server through kubectl
  // proxy: <reason>" when the socket does not answer.
  ApiResponse request(Method method, const std::string& target, const std::string& body = {},
                      std::string_view content_type = "application/json") const;

  ApiResponse get(const std::string& target) const { return request(Method::get, target); }

  // A streaming GET (a watch): calls on_data with each piece of the decoded body as it arrives
  // until the server ends it, on_data returns false or `cancel` fires. A non-2xx answer is
  // returned with its body and on_data is not called. Throws Error like request().
  ApiResponse stream(const std::string& target,
                     const std::function<bool(std::string_view)>& on_data, Cancel& cancel) const;

private:
  std::string socket_path_;
};

// The one-line reason in an API error answer: the Status object's message, else the body's first
// line (the proxy's own words, e.g. "dial tcp 127.0.0.1:1: connect: connection refused").
std::string error_text(const ApiResponse& response);

// Percent-encodes a query value (label selectors hold '=' and ',').
std::string query_escape(std::string_view value);

// Now as the API server writes a time (RFC 3339, UTC, whole seconds): annotations and data verify
// writes into the objects it creates or patches.
std::string rfc3339_now();

}  // namespace zerodrop::verify
