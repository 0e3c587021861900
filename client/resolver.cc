#include "resolver.h"

#include <arpa/inet.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <new>

#include "descriptor.h"
#include "dns_message.h"
#include "dns_stream.h"
#include "watcher.h"

namespace tlsnb {

// One lookup: a socket to the name server, the query, and the answer as it arrives.
class Resolver::Query final : public Watcher {
 public:
  Query(Resolver& owner, uint64_t conn, uint16_t id, uint16_t qtype)
      : owner_(owner), conn_(conn), id_(id), qtype_(qtype) {}
  ~Query() override { close_socket(); }

  uint64_t conn() const { return conn_; }
  uint16_t qtype() const { return qtype_; }
  bool over() const { return over_; }

  // Builds the query and sends it over UDP or TCP.
  void start(bool udp) {
    asked_ = dns::build_query(id_, owner_.config_.target, qtype_);
    if (asked_.code != dns::ok) return end(asked_.code);
    open(udp);
  }

  void on_event(uint32_t events) override {
    if (over_) return;
    try {
      if (connecting_) {
        if (!(events & (EPOLLOUT | EPOLLERR | EPOLLHUP))) return;
        int err = 0;
        socklen_t len = sizeof err;
        getsockopt(fd_.get(), SOL_SOCKET, SO_ERROR, &err, &len);
        if (err != 0) return end(err == ECONNREFUSED ? dns::no_server : dns::io_error);
        connecting_ = false;
      }
      if (sent_ < out_.size() && !send_rest()) return;
      if (events & (EPOLLIN | EPOLLHUP | EPOLLERR)) receive();
    } catch (const std::bad_alloc&) {
      end(dns::io_error);
    }
  }

  // Ends the query with `code` (and the addresses of a good answer); frees the socket now.
  void end(int code, const dns::Answer& answer = dns::Answer{}) {
    if (over_) return;
    over_ = true;
    close_socket();
    owner_.complete(this, code, answer);
  }

  void abandon() {
    over_ = true;
    close_socket();
  }

 private:
  void open(bool udp) {
    udp_ = udp;
    close_socket();
    int fd = socket(owner_.server_.ss_family, (udp ? SOCK_DGRAM : SOCK_STREAM) | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0) return end(dns::io_error);
    fd_.reset(fd);
    owner_.shared_.fd_opened();
    if (connect(fd, reinterpret_cast<const sockaddr*>(&owner_.server_), owner_.server_len_) != 0) {
      if (errno != EINPROGRESS) return end(errno == ECONNREFUSED ? dns::no_server : dns::io_error);
      connecting_ = true;
    }
    out_ = udp ? asked_.message : dns::frame(dns::Span{asked_.message.data(), asked_.message.size()});
    sent_ = 0;
    reader_ = dns::FrameReader();
    ++owner_.queries_;
    if (epoll_watch(owner_.shared_.epoll_fd, EPOLL_CTL_ADD, fd, EPOLLIN | EPOLLOUT, this) != 0)
      return end(dns::io_error);
    if (!connecting_) send_rest();
  }

  // Sends what is left of the query; false when the lookup ended.
  bool send_rest() {
    while (sent_ < out_.size()) {
      ssize_t n = send(fd_.get(), out_.data() + sent_, out_.size() - sent_, MSG_NOSIGNAL);
      if (n > 0) {
        sent_ += static_cast<size_t>(n);
        continue;
      }
      if (n < 0 && errno == EINTR) continue;
      if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return true;
      end(errno == ECONNREFUSED ? dns::no_server : dns::io_error);
      return false;
    }
    epoll_watch(owner_.shared_.epoll_fd, EPOLL_CTL_MOD, fd_.get(), EPOLLIN, this);  // the answer, now
    return true;
  }

  void receive() {
    uint8_t buf[4096];
    for (;;) {
      ssize_t n = recv(fd_.get(), buf, sizeof buf, 0);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return;
      if (n < 0) return end(errno == ECONNREFUSED ? dns::no_server : dns::io_error);
      if (udp_) {
        if (judge(dns::Span{buf, static_cast<size_t>(n)})) return;
        continue;  // a datagram that is not our answer: keep waiting (until the deadline)
      }
      if (n == 0) {
        int framing = reader_.finish();
        return end(framing == dns::ok ? dns::closed : framing);
      }
      int framing = reader_.feed(dns::Span{buf, static_cast<size_t>(n)});
      std::vector<uint8_t> message;
      if (reader_.pop(message)) {  // a whole answer first, even if the stream went bad after it
        judge(dns::Span{message.data(), message.size()});
        return;
      }
      if (framing != dns::ok) return end(framing);
    }
  }

  // Parses one answer; true when the lookup is over (or moved to TCP).
  bool judge(dns::Span message) {
    dns::Answer answer = dns::parse_response(message, asked_);
    // Over UDP anyone can send a datagram: what is not an answer to our query is noise.
    if (udp_ && (answer.code == dns::id_mismatch || answer.code == dns::not_a_response ||
                 answer.code == dns::question_mismatch))
      return false;
    if (udp_ && answer.code == dns::truncated) {  // the answer did not fit: ask again over TCP
      open(false);
      return true;
    }
    end(answer.code, answer);
    return true;
  }

  void close_socket() {
    if (fd_.get() < 0) return;
    fd_.reset();
    owner_.shared_.fd_closed();
  }

  Resolver& owner_;
  uint64_t conn_;
  uint16_t id_;
  uint16_t qtype_;
  dns::Query asked_;
  Descriptor fd_;
  bool udp_ = false;
  bool connecting_ = false;
  bool over_ = false;
  std::vector<uint8_t> out_;
  size_t sent_ = 0;
  dns::FrameReader reader_;
};

Resolver::Resolver(RunState& shared, const RunConfig& config)
    : shared_(shared), config_(config), slots_(slots), next_id_(static_cast<uint16_t>(config.seed * 7919u + 1)) {
  dns::Address server;
  dns::address_from_text(config.ns_ip, server);
  server_len_ = dns::socket_address(server, config.ns_port, server_);
}

Resolver::~Resolver() = default;

bool Resolver::has_free_slot() const { return busy() + 2 <= slots_.size(); }

size_t Resolver::busy() const {
  size_t n = 0;
  for (const auto& q : slots_) n += q ? 1 : 0;
  return n;
}

void Resolver::start(uint64_t conn) {
  halves_[conn] = Halves{};
  for (uint16_t qtype : {dns::type_a, dns::type_aaaa}) {
    for (auto& slot : slots_) {
      if (slot) continue;
      slot = std::make_unique<Query>(*this, conn, next_id_++, qtype);
      slot->start(config_.ns_udp);  // may end at once (complete() runs): the slot is then retired
      break;
    }
  }
}

void Resolver::cancel(uint64_t conn) {
  halves_.erase(conn);
  for (auto& slot : slots_) {
    if (slot && slot->conn() == conn) {
      slot->abandon();
      retired_.push_back(std::move(slot));
    }
  }
}

void Resolver::expire(uint64_t conn) {
  for (auto& slot : slots_) {
    if (slot && slot->conn() == conn) slot->end(dns::timeout);  // both queries: the one deadline
  }
}

// The union of the two answers: ok when either has an address; else the A query's code,
// unless it found no address and the AAAA query says more.
void Resolver::complete(Query* query, int code, const dns::Answer& answer) {
  for (auto& slot : slots_) {
    if (slot.get() == query) retired_.push_back(std::move(slot));  // freed after the epoll batch
  }
  auto it = halves_.find(query->conn());
  if (it == halves_.end()) return;
  Halves& h = it->second;
  if (query->qtype() == dns::type_a) {
    h.code4 = code;
    for (const in_addr& a : answer.addrs) h.v4.push_back(dns::address_of(a));
  } else {
    h.code6 = code;
    for (const in6_addr& a : answer.addrs6) h.v6.push_back(dns::address_of(a));
  }
  if (--h.left > 0) return;
  Lookup lookup{query->conn(), 0, std::move(h.v4)};
  lookup.addrs.insert(lookup.addrs.end(), h.v6.begin(), h.v6.end());
  if (lookup.addrs.empty()) lookup.code = h.code4 == dns::no_address && h.code6 != dns::ok ? h.code6 : h.code4;
  if (lookup.addrs.empty() && lookup.code == dns::ok) lookup.code = dns::no_address;
  halves_.erase(it);
  done_.push_back(std::move(lookup));
}

std::vector<Lookup> Resolver::take_done() {
  retired_.clear();
  std::vector<Lookup> out;
  out.swap(done_);
  return out;
}

}  // namespace tlsnb
