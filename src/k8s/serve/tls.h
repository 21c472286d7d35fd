#pragma once

// TLS for `tessera serve`'s listener (OpenSSL, Debian's libssl): a server context with a
// certificate and, optionally, a CA whose client certificates are required — kube-scheduler's
// extender tlsConfig presents one — and a TLS session over a SpinSocket usable as a
// Boost.Beast synchronous stream.
//
// Why by hand: Boost.Asio's ssl::stream needs an Asio socket, and the server reads through its
// own spinning sockets (k8s/serve/http_socket.h). OpenSSL is given a BIO that reads and writes
// through the SpinSocket, so the spin, the timeouts and the stop signal work as without TLS.

#include <openssl/ssl.h>

#include <boost/asio/buffer.hpp>
#include <boost/system/error_code.hpp>
#include <boost/system/system_error.hpp>
#include <cstddef>
#include <memory>
#include <string>

#include "k8s/serve/http_socket.h"
#include "util/result.h"

namespace tessera::k8s {

/// Files of a TLS listener (PEM).
struct TlsFiles {
  std::string cert_file;  ///< the server's certificate (chain)
  std::string key_file;   ///< its private key
  /// When set, every client must present a certificate this CA signed; a connection without
  /// one ends in the handshake, before any HTTP is read.
  std::string client_ca_file;
};

/// A server-side TLS context (TLS 1.2 and 1.3). Thread-safe after Create; shared by the
/// connections.
class TlsContext {
 public:
  /// Errors name the file and OpenSSL's reason.
  static Result<std::shared_ptr<TlsContext>> Create(const TlsFiles& files);
  ~TlsContext();
  TlsContext(const TlsContext&) = delete;
  TlsContext& operator=(const TlsContext&) = delete;
  SSL_CTX* get() const { return ctx_; }
  bool requires_client_certificate() const { return require_client_; }

 private:
  TlsContext() = default;
  SSL_CTX* ctx_ = nullptr;
  bool require_client_ = false;
};

/// A TLS session over a connected SpinSocket (not owned), as a Beast SyncReadStream and
/// SyncWriteStream. Errors of the socket come back as the socket gives them (eof, timed_out,
/// operation_aborted); a TLS failure as boost::asio::error::access_denied. Not thread-safe.
class TlsStream {
 public:
  TlsStream(SpinSocket* socket, const TlsContext& context);
  ~TlsStream();
  TlsStream(const TlsStream&) = delete;
  TlsStream& operator=(const TlsStream&) = delete;

  /// The server's side of the handshake. False when it fails (`why` gets OpenSSL's reason):
  /// the connection must then be closed without an answer.
  bool Handshake(std::string* why);
  /// Sends the TLS close_notify (best effort).
  void Shutdown();

  template <class MutableBuffers>
  size_t read_some(const MutableBuffers& buffers, boost::system::error_code& ec) {
    for (auto it = boost::asio::buffer_sequence_begin(buffers);
         it != boost::asio::buffer_sequence_end(buffers); ++it) {
      const boost::asio::mutable_buffer b = boost::asio::buffer(*it);
      if (b.size() > 0) return Read(b.data(), b.size(), ec);
    }
    ec = {};
    return 0;
  }
  template <class MutableBuffers>
  size_t read_some(const MutableBuffers& buffers) {
    return OrThrow([&](boost::system::error_code& ec) { return read_some(buffers, ec); });
  }
  template <class ConstBuffers>
  size_t write_some(const ConstBuffers& buffers, boost::system::error_code& ec) {
    size_t total = 0;
    for (auto it = boost::asio::buffer_sequence_begin(buffers);
         it != boost::asio::buffer_sequence_end(buffers); ++it) {
      const boost::asio::const_buffer b = boost::asio::buffer(*it);
      if (b.size() == 0) continue;
      total += Write(b.data(), b.size(), ec);
      if (ec) return total;
    }
    ec = {};
    return total;
  }
  template <class ConstBuffers>
  size_t write_some(const ConstBuffers& buffers) {
    return OrThrow([&](boost::system::error_code& ec) { return write_some(buffers, ec); });
  }

 private:
  template <class Call>
  static size_t OrThrow(Call call) {
    boost::system::error_code ec;
    const size_t n = call(ec);
    if (ec) throw boost::system::system_error(ec);
    return n;
  }
  size_t Read(void* data, size_t size, boost::system::error_code& ec);
  size_t Write(const void* data, size_t size, boost::system::error_code& ec);
  /// The error of a failed SSL call: the socket's own when it failed, else access_denied.
  boost::system::error_code Failure(int ssl_error);

  friend struct TlsBio;
  SpinSocket* socket_;
  SSL* ssl_ = nullptr;
  boost::system::error_code socket_error_;  ///< the last error of the socket under the BIO
};

}  // namespace tessera::k8s
