#pragma once

#include <functional>
#include <string>

namespace zerodrop::kubeapi {

// A fresh self-signed certificate and its key, PEM. kubectl sends a bearer token only over
// https, so the lab's API serves TLS with a certificate made per run.
struct Certificate {
  std::string cert_pem;
  std::string key_pem;
};

// An ECDSA P-256 certificate for `ip` (and "localhost"), valid from an hour ago for 30 days.
// Throws Error when OpenSSL fails.
Certificate make_certificate(const std::string& ip);

// Standard base64 (the kubeconfig's certificate-authority-data).
std::string base64(const std::string& data);

}  // namespace zerodrop::kubeapi
