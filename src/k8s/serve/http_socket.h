#pragma once

// The sockets under `tessera serve`'s HTTP layer (src/k8s/http_server.cc): a listening socket
// whose accept can be woken for shutdown, and a connected socket usable as a Boost.Beast
// synchronous stream that spins briefly before it blocks on a read.
//
// Why by hand: Boost.Beast parses and writes HTTP/1.1 but leaves the transport to the caller,
// and no Debian HTTP library spins on a socket before sleeping. The spin is what keeps the
// extender's tail latency low on virtual machines: a thread that sleeps between requests leaves
// its vCPU idle, and waking an idle vCPU costs 0.1 ms typically and milliseconds in the tail
// (docs/PERFORMANCE.md, the extender under load). kube-scheduler sends filter, prioritize and bind
// of one pod back to back on one connection, so a short spin after each answer catches the next
// request without a wake-up.

#include <sys/uio.h>

#include <atomic>
#include <boost/asio/buffer.hpp>
#include <boost/asio/error.hpp>
#include <boost/system/error_code.hpp>
#include <boost/system/system_error.hpp>
#include <cstddef>
#include <string>

#include "util/result.h"
#include "util/spin_lock.h"

namespace tessera::k8s {

/// A one-shot wake-up shared by a listener and its connections: once Signal()ed, every poll
/// that includes fd() returns (the event is never consumed).
class StopSignal {
 public:
  StopSignal();
  ~StopSignal();
  StopSignal(const StopSignal&) = delete;
  StopSignal& operator=(const StopSignal&) = delete;
  void Signal();
  bool signalled() const { return signalled_.load(std::memory_order_acquire); }
  int fd() const { return fd_; }

 private:
  int fd_;
  std::atomic<bool> signalled_{false};
};

/// A bound, listening TCP socket.
class Listener {
 public:
  Listener() = default;
  ~Listener();
  Listener(const Listener&) = delete;
  Listener& operator=(const Listener&) = delete;

  /// Binds host:port (a name or address; port 0 picks a free one) and listens. Error names
  /// the address and the system's reason.
  Status Bind(const std::string& host, int port);
  int port() const { return port_; }
  /// Waits for a connection; returns its socket (non-blocking, close-on-exec, TCP_NODELAY), or
  /// -1 once `stop` is signalled.
  int Accept(const StopSignal& stop);
  /// Stops listening (the port is free again). Idempotent.
  void Close();

 private:
  int fd_ = -1;
  int port_ = 0;
};

/// Timing of a SpinSocket's reads and writes.
struct SpinSocketOptions {
  /// Before a read blocks, keep trying it without blocking for this long (microseconds; 0
  /// blocks at once). At most this much CPU per wait.
  int spin_us = kDefaultSpinMicroseconds;
  int idle_timeout_ms = 60000;  ///< no request started for this long: the connection closes
  int io_timeout_ms = 10000;    ///< a started request or an answer stalls this long: closes
};

/// A connected socket (owned: closed by the destructor) as a Boost.Beast SyncReadStream and
/// SyncWriteStream. Reads fail with asio::error::eof when the peer closed, timed_out on a
/// timeout, and operation_aborted when the stop signal fires while no request is under way
/// (set_idle(true)).
class SpinSocket {
 public:
  SpinSocket(int fd, const StopSignal* stop, SpinSocketOptions options)
      : fd_(fd), stop_(stop), options_(options) {}
  ~SpinSocket();
  SpinSocket(const SpinSocket&) = delete;
  SpinSocket& operator=(const SpinSocket&) = delete;

  /// Idle: waiting for the first byte of a request (idle timeout, stop ends the wait).
  void set_idle(bool idle) { idle_ = idle; }
  /// Ends sending, then reads and drops what the peer still sends (at most 1 MiB, 1 s) before
  /// the socket is closed: closing with unread bytes would reset the connection, and a reset
  /// may destroy an error answer (e.g. 413) before the client has read it.
  void LingeringClose();

  template <class MutableBuffers>
  size_t read_some(const MutableBuffers& buffers, boost::system::error_code& ec) {
    iovec iov[kMaxIov];
    const int n = ToIov(buffers, iov);
    return n == 0 ? (ec = {}, 0) : Read(iov, n, ec);
  }
  template <class MutableBuffers>
  size_t read_some(const MutableBuffers& buffers) {
    return OrThrow([&](boost::system::error_code& ec) { return read_some(buffers, ec); });
  }
  template <class ConstBuffers>
  size_t write_some(const ConstBuffers& buffers, boost::system::error_code& ec) {
    iovec iov[kMaxIov];
    const int n = ToIov(buffers, iov);
    return n == 0 ? (ec = {}, 0) : Write(iov, n, ec);
  }
  template <class ConstBuffers>
  size_t write_some(const ConstBuffers& buffers) {
    return OrThrow([&](boost::system::error_code& ec) { return write_some(buffers, ec); });
  }

 private:
  static constexpr int kMaxIov = 16;
  /// The throwing form of an error_code call (Beast's stream concepts ask for both).
  template <class Call>
  static size_t OrThrow(Call call) {
    boost::system::error_code ec;
    const size_t n = call(ec);
    if (ec) throw boost::system::system_error(ec);
    return n;
  }
  template <class Buffers>
  static int ToIov(const Buffers& buffers, iovec* iov) {
    int n = 0;
    for (auto it = boost::asio::buffer_sequence_begin(buffers);
         it != boost::asio::buffer_sequence_end(buffers) && n < kMaxIov; ++it) {
      const auto b = boost::asio::buffer(*it);
      if (b.size() == 0) continue;
      iov[n].iov_base = const_cast<void*>(static_cast<const void*>(b.data()));
      iov[n].iov_len = b.size();
      ++n;
    }
    return n;
  }
  size_t Read(iovec* iov, int n, boost::system::error_code& ec);
  size_t Write(const iovec* iov, int n, boost::system::error_code& ec);

  int fd_;
  const StopSignal* stop_;
  SpinSocketOptions options_;
  bool idle_ = true;
};

}  // namespace tessera::k8s
