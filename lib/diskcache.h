// Port of helpers.py's diskcache_get / diskcache_put: a persistent key -> value store for results that are costly to
// recompute (compiled kernels, BEAM search results). One file per entry under cache_dir()/<table>/; each file holds
// its table, its key and its value's size and checksum, so a hash collision, a torn write or a damaged file (truncated,
// zeroed, a flipped bit) reads as a miss, never as a wrong value, and the caller's put rewrites it. Writes go through a
// temporary file and a rename. CACHELEVEL=0 turns it off (reads miss, writes are dropped); an unwritable cache
// directory only loses the caching.
#pragma once
#include <optional>
#include <string>

namespace tg {

// $TG_CACHE_DIR, else $XDG_CACHE_HOME/tinygrad-cpp, else ~/.cache/tinygrad-cpp
std::string cache_dir();
std::optional<std::string> diskcache_get(const std::string& table, const std::string& key);
void diskcache_put(const std::string& table, const std::string& key, const std::string& val);

}  // namespace tg
