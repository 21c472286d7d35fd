// TLS on the extender's listener with client-certificate verification: a client without a
// certificate the configured CA signed gets no answer from any path. Certificates are made
// with the openssl CLI (Debian's openssl) into a temporary folder.

#include "k8s/serve/tls.h"

#include <gtest/gtest.h>
#include <httplib.h>
#include <signal.h>
#include <stdlib.h>

#include <cstdlib>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "k8s/extender/extender.h"
#include "k8s/extender/extender_protocol.h"
#include "k8s/live.h"
#include "k8s/serve/http_server.h"

namespace tessera::k8s {
namespace {

using Json = nlohmann::json;

bool Shell(const std::string& cmd) { return std::system((cmd + " >/dev/null 2>&1").c_str()) == 0; }

/// In `dir`: ca.{crt,key}; server.{crt,key} and client.{crt,key} signed by it; rogue.{crt,key}
/// self-signed with the same subject as the client.
bool MakePki(const std::string& dir) {
  const std::string ec = "-newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes";
  if (!Shell("openssl req -x509 " + ec + " -days 1 -subj /CN=test-ca -keyout " + dir +
             "/ca.key -out " + dir + "/ca.crt")) {
    return false;
  }
  for (const std::string name : {"server", "client"}) {
    const std::string subject = name == "server" ? "/CN=127.0.0.1" : "/CN=kube-scheduler";
    if (!Shell("openssl req " + ec + " -subj " + subject + " -keyout " + dir + "/" + name +
               ".key -out " + dir + "/" + name + ".csr")) {
      return false;
    }
    std::string ext;
    if (name == "server") {
      ext = " -extfile <(printf 'subjectAltName=IP:127.0.0.1')";
    }
    if (!Shell("bash -c \"openssl x509 -req -days 1 -in " + dir + "/" + name + ".csr -CA " + dir +
               "/ca.crt -CAkey " + dir + "/ca.key -CAcreateserial -out " + dir + "/" + name +
               ".crt" + ext + "\"")) {
      return false;
    }
  }
  return Shell("openssl req -x509 " + ec + " -days 1 -subj /CN=kube-scheduler -keyout " + dir +
               "/rogue.key -out " + dir + "/rogue.crt");
}

std::string TempDir() {
  char dir[] = "/tmp/tessera-tls-XXXXXX";
  EXPECT_NE(mkdtemp(dir), nullptr);
  return dir;
}

class TlsServe : public ::testing::Test {
 protected:
  void SetUp() override {
    // httplib's TLS client writes through OpenSSL's socket BIO (write(2), not MSG_NOSIGNAL):
    // a server that drops a refused handshake would otherwise end the test process with
    // SIGPIPE. `tessera serve` ignores SIGPIPE for the same reason.
    signal(SIGPIPE, SIG_IGN);
    dir_ = TempDir();
    if (!MakePki(dir_)) GTEST_SKIP() << "openssl CLI not available";
    const Json nodes = {{"items", {testing::NodeObject("n1", 2)}}};
    extender_ = std::move(Extender::FromJson(nodes.dump(), "", {}).value());
    Result<std::shared_ptr<TlsContext>> tls =
        TlsContext::Create({dir_ + "/server.crt", dir_ + "/server.key", dir_ + "/ca.crt"});
    ASSERT_TRUE(tls.ok()) << tls.error().message;
    HttpServerOptions so;
    so.port = 0;
    so.tls = *tls;
    so.socket.io_timeout_ms = 2000;
    server_ = std::make_unique<HttpServer>(extender_.get(), so);
    ASSERT_TRUE(server_->Start().ok());
  }
  void TearDown() override {
    if (server_) server_->Stop();
    Shell("rm -rf " + dir_);
  }
  /// A client that trusts the CA, presenting `cert` ("" for none).
  std::unique_ptr<httplib::SSLClient> Client(const std::string& cert) {
    auto c = cert.empty() ? std::make_unique<httplib::SSLClient>("127.0.0.1", server_->port())
                          : std::make_unique<httplib::SSLClient>("127.0.0.1", server_->port(),
                                                                 dir_ + "/" + cert + ".crt",
                                                                 dir_ + "/" + cert + ".key");
    c->set_ca_cert_path(dir_ + "/ca.crt");
    c->enable_server_certificate_verification(true);
    c->set_connection_timeout(2);
    c->set_read_timeout(2);
    return c;
  }

  std::string dir_;
  std::unique_ptr<Extender> extender_;
  std::unique_ptr<HttpServer> server_;
};

const std::string kFilter = Json{
    {"Pod",
     {{"metadata", {{"name", "p"}, {"namespace", "ml"}, {"uid", "u1"}}},
      {"spec",
       {{"containers",
         {{{"name", "c"}, {"resources", {{"limits", {{"tessera.io/gpu", "1"}}}}}}}}}}}},
    {"NodeNames", {"n1"}}}.dump();

TEST_F(TlsServe, AClientWithTheCasCertificateIsAnswered) {
  auto c = Client("client");
  auto f = c->Post("/filter", kFilter, "application/json");
  ASSERT_TRUE(f) << httplib::to_string(f.error());
  EXPECT_EQ(f->status, 200);
  EXPECT_NE(f->body.find(R"("NodeNames":["n1"])"), std::string::npos) << f->body;
  auto b = c->Post("/bind", EncodeExtenderBindingArgs({"p", "ml", "u1", "n1"}), "application/json");
  ASSERT_TRUE(b);
  EXPECT_EQ(b->body, R"({"Error":""})");
  EXPECT_EQ(extender_->gpu_allocated_milli(), 1000);
}

TEST_F(TlsServe, NoValidClientCertificateNoAnswerFromAnyPath) {
  for (const std::string cert : {"", "rogue"}) {
    auto c = Client(cert);
    for (const char* path : {"/filter", "/prioritize", "/preempt", "/bind"}) {
      auto r = c->Post(path, kFilter, "application/json");
      EXPECT_FALSE(r) << (cert.empty() ? "no certificate" : cert) << " " << path << ": HTTP "
                      << r->status;
    }
    for (const char* path : {"/state", "/metrics", "/healthz"}) {
      auto r = c->Get(path);
      EXPECT_FALSE(r) << (cert.empty() ? "no certificate" : cert) << " " << path;
    }
  }
  // Plain HTTP on the TLS port: no HTTP answer either.
  httplib::Client plain("127.0.0.1", server_->port());
  plain.set_read_timeout(2);
  auto r =
      plain.Post("/bind", EncodeExtenderBindingArgs({"p", "ml", "u1", "n1"}), "application/json");
  EXPECT_FALSE(r && r->status == 200);
  EXPECT_EQ(extender_->gpu_allocated_milli(), 0);  // nothing was bound
}

TEST(TlsContext, ErrorsNameTheFile) {
  Result<std::shared_ptr<TlsContext>> t = TlsContext::Create({"/nonexistent.crt", "/k", ""});
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.error().message.rfind("TLS certificate /nonexistent.crt: ", 0), 0u)
      << t.error().message;
  EXPECT_FALSE(TlsContext::Create({"", "", ""}).ok());
}

}  // namespace
}  // namespace tessera::k8s
