// TEMPORARY stub until the DNS parser lands: every lookup fails as no_server.
#include "resolver.h"

#include "dns_error.h"

namespace tlsnb {

class Resolver::Query {};

Resolver::Resolver(Shared& shared, const Options& options) : shared_(shared), options_(options), next_id_(1) {}
Resolver::~Resolver() = default;
bool Resolver::has_free_slot() const { return true; }
size_t Resolver::busy() const { return 0; }
void Resolver::start(uint64_t conn, int64_t) { done_.push_back(Lookup{conn, dns::no_server, {}}); }
void Resolver::cancel(uint64_t) {}
std::vector<Lookup> Resolver::take_done() { return std::move(done_); }
void Resolver::complete(Query*, int, std::vector<in_addr>) {}

}  // namespace tlsnb
