#include "k8s/serve/http_socket.h"

#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sched.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>

namespace tessera::k8s {
namespace {

using Clock = std::chrono::steady_clock;

boost::system::error_code Errno(int e) {
  return boost::system::error_code(e, boost::system::system_category());
}

}  // namespace

StopSignal::StopSignal() : fd_(eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)) {}

StopSignal::~StopSignal() {
  if (fd_ >= 0) close(fd_);
}

void StopSignal::Signal() {
  signalled_.store(true, std::memory_order_release);
  const uint64_t one = 1;
  if (fd_ >= 0) (void)!write(fd_, &one, sizeof one);
}

Listener::~Listener() { Close(); }

void Listener::Close() {
  if (fd_ >= 0) close(fd_);
  fd_ = -1;
}

Status Listener::Bind(const std::string& host, int port) {
  const std::string where = host + ":" + std::to_string(port);
  if (fd_ >= 0) return Error{"cannot bind " + where + ": already bound"};
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
  addrinfo* found = nullptr;
  const std::string service = std::to_string(port);
  const int gai =
      getaddrinfo(host.empty() ? nullptr : host.c_str(), service.c_str(), &hints, &found);
  if (gai != 0) return Error{"cannot bind " + where + ": " + gai_strerror(gai)};
  std::string reason = "no address";
  for (addrinfo* a = found; a != nullptr; a = a->ai_next) {
    const int fd = socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol);
    if (fd < 0) {
      reason = std::strerror(errno);
      continue;
    }
    const int one = 1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (bind(fd, a->ai_addr, a->ai_addrlen) != 0 || listen(fd, SOMAXCONN) != 0) {
      reason = std::strerror(errno);
      close(fd);
      continue;
    }
    sockaddr_storage bound{};
    socklen_t len = sizeof bound;
    getsockname(fd, reinterpret_cast<sockaddr*>(&bound), &len);
    port_ = bound.ss_family == AF_INET6 ? ntohs(reinterpret_cast<sockaddr_in6*>(&bound)->sin6_port)
                                        : ntohs(reinterpret_cast<sockaddr_in*>(&bound)->sin_port);
    fd_ = fd;
    break;
  }
  freeaddrinfo(found);
  if (fd_ < 0) return Error{"cannot bind " + where + ": " + reason};
  return {};
}

int Listener::Accept(const StopSignal& stop) {
  for (;;) {
    if (stop.signalled() || fd_ < 0) return -1;
    pollfd p[2] = {{fd_, POLLIN, 0}, {stop.fd(), POLLIN, 0}};
    if (poll(p, 2, -1) < 0 && errno != EINTR) return -1;
    if (stop.signalled()) return -1;
    if ((p[0].revents & POLLIN) == 0) continue;
    const int fd = accept4(fd_, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd < 0) {
      // The peer gave up before we took it, or we are out of descriptors: back off a little
      // rather than spin on a listen queue we cannot drain.
      if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM) {
        poll(nullptr, 0, 10);
      }
      continue;
    }
    const int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    return fd;
  }
}

SpinSocket::~SpinSocket() {
  if (fd_ >= 0) {
    shutdown(fd_, SHUT_RDWR);
    close(fd_);
  }
}

void SpinSocket::LingeringClose() {
  if (fd_ < 0) return;
  shutdown(fd_, SHUT_WR);
  const Clock::time_point start = Clock::now();
  char scratch[16384];
  for (size_t drained = 0; drained < (size_t{1} << 20);) {
    const auto waited = std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - start);
    const int left = 1000 - static_cast<int>(waited.count());
    if (left <= 0) break;
    pollfd p{fd_, POLLIN, 0};
    if (poll(&p, 1, left) <= 0) break;
    const ssize_t got = recv(fd_, scratch, sizeof scratch, MSG_DONTWAIT);
    if (got == 0 || (got < 0 && errno != EINTR && errno != EAGAIN && errno != EWOULDBLOCK)) break;
    if (got > 0) drained += static_cast<size_t>(got);
  }
}

size_t SpinSocket::Read(iovec* iov, int n, boost::system::error_code& ec) {
  msghdr msg{};
  msg.msg_iov = iov;
  msg.msg_iovlen = static_cast<size_t>(n);
  const Clock::time_point start = Clock::now();
  const auto spin = std::chrono::microseconds(options_.spin_us);
  bool spinning = options_.spin_us > 0;
  for (;;) {
    const ssize_t got = recvmsg(fd_, &msg, MSG_DONTWAIT);
    if (got > 0) {
      idle_ = false;  // a request is under way: read it whole, even when stopping
      ec = {};
      return static_cast<size_t>(got);
    }
    if (got == 0) {
      ec = boost::asio::error::eof;
      return 0;
    }
    if (errno == EINTR) continue;
    if (errno != EAGAIN && errno != EWOULDBLOCK) {
      ec = Errno(errno);
      return 0;
    }
    if (idle_ && stop_ != nullptr && stop_->signalled()) {
      ec = boost::asio::error::operation_aborted;
      return 0;
    }
    if (spinning) {
      if (Clock::now() - start < spin) {
        sched_yield();  // let a client on this core run; resumes at once when none does
        continue;
      }
      spinning = false;
    }
    const int timeout_ms = idle_ ? options_.idle_timeout_ms : options_.io_timeout_ms;
    const auto waited = std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - start);
    const int left = timeout_ms - static_cast<int>(waited.count());
    if (left <= 0) {
      ec = boost::asio::error::timed_out;
      return 0;
    }
    // While idle the stop signal ends the wait too; mid-request it does not (the request is
    // read, answered, and then the connection closes).
    pollfd p[2] = {{fd_, POLLIN, 0}, {stop_ != nullptr ? stop_->fd() : -1, POLLIN, 0}};
    if (poll(p, idle_ ? 2 : 1, left) < 0 && errno != EINTR) {
      ec = Errno(errno);
      return 0;
    }
  }
}

size_t SpinSocket::Write(const iovec* iov, int n, boost::system::error_code& ec) {
  msghdr msg{};
  msg.msg_iov = const_cast<iovec*>(iov);
  msg.msg_iovlen = static_cast<size_t>(n);
  const Clock::time_point start = Clock::now();
  for (;;) {
    const ssize_t sent = sendmsg(fd_, &msg, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (sent >= 0) {
      ec = {};
      return static_cast<size_t>(sent);
    }
    if (errno == EINTR) continue;
    if (errno != EAGAIN && errno != EWOULDBLOCK) {
      ec = Errno(errno);
      return 0;
    }
    const auto waited = std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - start);
    const int left = options_.io_timeout_ms - static_cast<int>(waited.count());
    if (left <= 0) {
      ec = boost::asio::error::timed_out;
      return 0;
    }
    pollfd p{fd_, POLLOUT, 0};
    if (poll(&p, 1, left) < 0 && errno != EINTR) {
      ec = Errno(errno);
      return 0;
    }
  }
}

}  // namespace tessera::k8s
