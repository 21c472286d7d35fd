#include "k8s/serve/tls.h"

#include <openssl/bio.h>
#include <openssl/err.h>

#include <boost/asio/error.hpp>
#include <climits>

namespace tessera::k8s {
namespace {

/// OpenSSL's error queue as one line (and emptied).
std::string OpenSslErrors() {
  std::string out;
  for (unsigned long e = ERR_get_error(); e != 0; e = ERR_get_error()) {
    char buf[256];
    ERR_error_string_n(e, buf, sizeof buf);
    if (!out.empty()) out += "; ";
    out += buf;
  }
  return out.empty() ? "unknown TLS error" : out;
}

}  // namespace

/// The BIO under a TlsStream: reads and writes go to its SpinSocket.
struct TlsBio {
  static TlsStream* Stream(BIO* b) { return static_cast<TlsStream*>(BIO_get_data(b)); }

  static int Write(BIO* b, const char* data, int len) {
    BIO_clear_retry_flags(b);
    TlsStream* s = Stream(b);
    boost::system::error_code ec;
    const size_t n = s->socket_->write_some(boost::asio::const_buffer(data, len), ec);
    if (ec) {
      s->socket_error_ = ec;
      return -1;
    }
    return static_cast<int>(n);
  }

  static int Read(BIO* b, char* data, int len) {
    BIO_clear_retry_flags(b);
    TlsStream* s = Stream(b);
    boost::system::error_code ec;
    const size_t n = s->socket_->read_some(boost::asio::mutable_buffer(data, len), ec);
    if (ec) {
      s->socket_error_ = ec;
      return ec == boost::asio::error::eof ? 0 : -1;
    }
    return static_cast<int>(n);
  }

  static long Control(BIO*, int cmd, long, void*) { return cmd == BIO_CTRL_FLUSH ? 1 : 0; }

  static int Create(BIO* b) {
    BIO_set_init(b, 1);
    return 1;
  }

  static BIO_METHOD* Method() {
    static BIO_METHOD* method = [] {
      BIO_METHOD* m = BIO_meth_new(BIO_get_new_index() | BIO_TYPE_SOURCE_SINK, "tessera-spin");
      BIO_meth_set_write(m, &TlsBio::Write);
      BIO_meth_set_read(m, &TlsBio::Read);
      BIO_meth_set_ctrl(m, &TlsBio::Control);
      BIO_meth_set_create(m, &TlsBio::Create);
      return m;
    }();
    return method;
  }
};

Result<std::shared_ptr<TlsContext>> TlsContext::Create(const TlsFiles& files) {
  if (files.cert_file.empty() || files.key_file.empty()) {
    return Error{"TLS needs both a certificate and a key file"};
  }
  std::shared_ptr<TlsContext> c(new TlsContext());
  c->ctx_ = SSL_CTX_new(TLS_server_method());
  if (c->ctx_ == nullptr) return Error{"TLS: " + OpenSslErrors()};
  SSL_CTX_set_min_proto_version(c->ctx_, TLS1_2_VERSION);
  if (SSL_CTX_use_certificate_chain_file(c->ctx_, files.cert_file.c_str()) != 1) {
    return Error{"TLS certificate " + files.cert_file + ": " + OpenSslErrors()};
  }
  if (SSL_CTX_use_PrivateKey_file(c->ctx_, files.key_file.c_str(), SSL_FILETYPE_PEM) != 1) {
    return Error{"TLS key " + files.key_file + ": " + OpenSslErrors()};
  }
  if (SSL_CTX_check_private_key(c->ctx_) != 1) {
    return Error{"TLS key " + files.key_file + " does not match certificate " + files.cert_file};
  }
  if (!files.client_ca_file.empty()) {
    if (SSL_CTX_load_verify_locations(c->ctx_, files.client_ca_file.c_str(), nullptr) != 1) {
      return Error{"TLS client CA " + files.client_ca_file + ": " + OpenSslErrors()};
    }
    STACK_OF(X509_NAME)* names = SSL_load_client_CA_file(files.client_ca_file.c_str());
    if (names != nullptr) SSL_CTX_set_client_CA_list(c->ctx_, names);
    SSL_CTX_set_verify(c->ctx_, SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT, nullptr);
    c->require_client_ = true;
  }
  return c;
}

TlsContext::~TlsContext() {
  if (ctx_ != nullptr) SSL_CTX_free(ctx_);
}

TlsStream::TlsStream(SpinSocket* socket, const TlsContext& context) : socket_(socket) {
  ssl_ = SSL_new(context.get());
  BIO* bio = BIO_new(TlsBio::Method());
  BIO_set_data(bio, this);
  SSL_set_bio(ssl_, bio, bio);  // ssl_ owns it
}

TlsStream::~TlsStream() { SSL_free(ssl_); }

bool TlsStream::Handshake(std::string* why) {
  ERR_clear_error();
  const int r = SSL_accept(ssl_);
  if (r == 1) return true;
  const int e = SSL_get_error(ssl_, r);
  *why = socket_error_ ? "connection: " + socket_error_.message() : OpenSslErrors();
  (void)e;
  return false;
}

void TlsStream::Shutdown() {
  ERR_clear_error();
  (void)SSL_shutdown(ssl_);
}

boost::system::error_code TlsStream::Failure(int ssl_error) {
  if (socket_error_) return socket_error_;
  if (ssl_error == SSL_ERROR_ZERO_RETURN) return boost::asio::error::eof;
  ERR_clear_error();
  return boost::asio::error::access_denied;
}

size_t TlsStream::Read(void* data, size_t size, boost::system::error_code& ec) {
  ERR_clear_error();
  socket_error_ = {};
  size_t got = 0;
  if (SSL_read_ex(ssl_, data, size, &got) == 1) {
    ec = {};
    return got;
  }
  ec = Failure(SSL_get_error(ssl_, 0));
  return 0;
}

size_t TlsStream::Write(const void* data, size_t size, boost::system::error_code& ec) {
  ERR_clear_error();
  socket_error_ = {};
  size_t sent = 0;
  if (SSL_write_ex(ssl_, data, size, &sent) == 1) {
    ec = {};
    return sent;
  }
  ec = Failure(SSL_get_error(ssl_, 0));
  return 0;
}

}  // namespace tessera::k8s
