// A fixed set of ReadConnections shared by the server's threads: a request borrows one for its
// queries and gives it back (a connection is used by one thread at a time).
#pragma once
#include <condition_variable>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "src/serve/read_connection.h"

namespace trialdb::serve {

class ConnectionPool {
 public:
  ConnectionPool(const std::vector<std::string>& paths, size_t size);

  // A borrowed connection, returned to the pool when it goes out of scope.
  class Lease {
   public:
    Lease(ConnectionPool* pool, std::unique_ptr<ReadConnection> c) : pool_(pool), c_(std::move(c)) {}
    ~Lease();
    Lease(Lease&&) = default;
    ReadConnection& operator*() const { return *c_; }
    ReadConnection* operator->() const { return c_.get(); }

   private:
    ConnectionPool* pool_;
    std::unique_ptr<ReadConnection> c_;
  };
  Lease borrow();  // waits for a free connection
  // A free connection, or none when every one is in use (a request that holds one may ask for a
  // second this way: waiting for it could wait for ever).
  std::optional<Lease> try_borrow();

 private:
  std::mutex mutex_;
  std::condition_variable returned_;
  std::vector<std::unique_ptr<ReadConnection>> free_;
};

}  // namespace trialdb::serve
