#include "lib/diskcache.h"

#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "lib/helpers.h"

namespace tg {

namespace {

uint64_t fnv1a(const std::string& s, uint64_t h = 1469598103934665603ull) {
  for (unsigned char c : s) h = (h ^ c) * 1099511628211ull;
  return h;
}

std::string hex16(uint64_t v) {
  char b[20];
  std::snprintf(b, sizeof b, "%016llx", (unsigned long long)v);
  return b;
}

// a readable directory name for short plain table names, a hash for the rest (compile tables carry CPU features)
std::string table_dir(const std::string& table) {
  bool plain = table.size() <= 48;
  for (char c : table) plain &= std::isalnum((unsigned char)c) || c == '_' || c == '-';
  return plain ? table : table.substr(0, 24) + "-" + hex16(fnv1a(table));
}

std::filesystem::path entry_path(const std::string& table, const std::string& key) {
  // two different hashes of the key: 128 bits in the name, and the key itself inside the file
  return std::filesystem::path(cache_dir()) / table_dir(table) /
         (hex16(fnv1a(key)) + hex16(fnv1a(key, 0x9e3779b97f4a7c15ull)));
}

// "<table size> <key size> <value size> <value checksum>\n" table key: an entry whose value was truncated, zeroed or
// altered in any byte no longer matches its header and reads as a miss (the caller recomputes and rewrites it)
std::string header(const std::string& table, const std::string& key, const std::string& val) {
  return std::to_string(table.size()) + " " + std::to_string(key.size()) + " " + std::to_string(val.size()) + " " +
         hex16(fnv1a(val)) + "\n" + table + key;
}

}  // namespace

std::string cache_dir() {
  if (const char* d = std::getenv("TG_CACHE_DIR"); d && *d) return d;
  if (const char* x = std::getenv("XDG_CACHE_HOME"); x && *x) return std::string(x) + "/tinygrad-cpp";
  if (const char* h = std::getenv("HOME"); h && *h) return std::string(h) + "/.cache/tinygrad-cpp";
  return "/tmp/tinygrad-cpp-cache";
}

std::optional<std::string> diskcache_get(const std::string& table, const std::string& key) {
  if (getenv_int("CACHELEVEL", 2, 0, 2) < 1) return std::nullopt;
  std::ifstream f(entry_path(table, key), std::ios::binary);
  if (!f) return std::nullopt;
  std::stringstream ss;
  ss << f.rdbuf();
  std::string all = ss.str();
  size_t nl = all.find('\n');
  if (nl == std::string::npos) return std::nullopt;
  // the value's size is in the header: everything after "table key"
  std::string prefix = std::to_string(table.size()) + " " + std::to_string(key.size()) + " ";
  if (all.compare(0, prefix.size(), prefix) != 0) return std::nullopt;
  size_t body = nl + 1 + table.size() + key.size();
  if (all.size() < body) return std::nullopt;
  std::string val = all.substr(body);
  if (all.compare(0, body, header(table, key, val)) != 0) return std::nullopt;
  return val;
}

void diskcache_put(const std::string& table, const std::string& key, const std::string& val) {
  if (getenv_int("CACHELEVEL", 2, 0, 2) < 1) return;
  std::error_code ec;
  std::filesystem::path p = entry_path(table, key);
  std::filesystem::create_directories(p.parent_path(), ec);
  if (ec) return;
  std::filesystem::path tmp = p;
  static std::atomic<uint64_t> n_tmp{0};  // one temporary per writer, also between threads of one process
  tmp += ".tmp" + std::to_string((long long)::getpid()) + "-" + std::to_string(n_tmp++);
  {
    std::ofstream f(tmp, std::ios::binary | std::ios::trunc);
    if (!f) return;
    f << header(table, key, val) << val;
    if (!f) {
      f.close();
      std::filesystem::remove(tmp, ec);
      return;
    }
  }
  std::filesystem::rename(tmp, p, ec);
  if (ec) std::filesystem::remove(tmp, ec);
}

}  // namespace tg
