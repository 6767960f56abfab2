// `trialdb synth --profile FILE OUT`: a synthetic trial shaped like a real one, from a shape
// profile (bench/profiles/README.md): the profile's tensors with their dtypes, shapes, modes,
// collections and number of values saved, and values of the profile's character (fraction of
// zeros, median, range). Benchmarks on such trials measure what real trials cost (many small
// values, a few large ones) rather than what 1M-element tensors cost.
#pragma once
#include <cstdint>
#include <string>

namespace trialdb::cli {

// Writes the trial (one worker, `worker_0`) into the new folder `out`, deterministic for the
// seed; prints the same summary line as the other synth. Returns an exit code; errors (naming
// the profile and what is wrong in it) go to stderr before anything is written.
int synth_from_profile(const std::string& profile_path, const std::string& out, uint64_t seed, bool checksums);

}  // namespace trialdb::cli
