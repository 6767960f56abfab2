// synth --profile: reads a shape profile and writes a trial of its shape (synth_profile.h).
//
// Steps: the profile's steps per mode, interleaved evenly (800 TRAIN + 200 EVAL: every 5th step
// EVAL). A tensor saved V times over the N global steps is saved at every (N / V)-th global step
// of its modes, at most V times: V = N saves every step, a gradient saved only in TRAIN saves
// at every TRAIN step, a tensor of a 10,000-tensor model saved 3 times over 48 steps at steps 0,
// 16 and 32. Values: a fraction `mean_zero_fraction` of the elements is 0; the others are
// uniform over `mean_range` around `mean_p50`, or over (0, range] when the tensor is mostly zeros
// around a median of 0 (a ReLU output). Scalars vary by 5% around their median from step to step.
// A tensor with `classes` C holds class indices (labels): each element uniform over 0..C-1.
// String tensors hold a few distinct words. Values are deterministic for a seed.
#include "src/synth_profile.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>
#include <vector>

#include "ingest/writer/trial_writer.h"
#include "src/commands.h"
#include "src/output.h"
#include "src/synth_values.h"

namespace trialdb::cli {

namespace {

// One tensor of a profile.
struct ProfileTensor {
  std::string name;
  DType dtype;
  std::vector<int64_t> shape;
  int64_t values_saved = 0;
  std::vector<TrialMode> modes;
  std::vector<std::string> collections;
  double zero_fraction = 0, median = 0, range = 1;  // the value character (numeric tensors)
  int64_t classes = 0;                              // > 0: class indices 0..classes-1
  int64_t numel() const {
    int64_t n = 1;
    for (int64_t d : shape) n *= d;
    return n;
  }
};

struct Profile {
  std::vector<std::pair<TrialMode, int64_t>> steps_per_mode;  // in TRAIN, EVAL, PREDICT, GLOBAL order
  std::vector<ProfileTensor> tensors;
};

constexpr TrialMode kModes[] = {TrialMode::kTrain, TrialMode::kEval, TrialMode::kPredict, TrialMode::kGlobal};

std::optional<TrialMode> mode_from_name(const std::string& name) {
  for (TrialMode m : kModes)
    if (name == trial_mode_name(m)) return m;
  return std::nullopt;
}

// Parses the profile; an error message (without the file name) when it is not one.
std::string parse_profile(const nlohmann::json& doc, Profile* out) {
  if (!doc.is_object() || !doc.contains("steps_per_mode") || !doc.contains("tensors"))
    return "not a shape profile (an object with steps_per_mode and tensors)";
  const auto& spm = doc["steps_per_mode"];
  if (!spm.is_object()) return "steps_per_mode is not an object";
  for (TrialMode m : kModes) {
    auto it = spm.find(trial_mode_name(m));
    if (it == spm.end()) continue;
    if (!it->is_number_integer() || it->get<int64_t>() < 0)
      return std::string("steps_per_mode.") + trial_mode_name(m) + " is not a count";
    if (it->get<int64_t>() > 0) out->steps_per_mode.emplace_back(m, it->get<int64_t>());
  }
  for (const auto& [key, value] : spm.items())
    if (!mode_from_name(key)) return "steps_per_mode has an unknown mode '" + key + "'";
  if (out->steps_per_mode.empty()) return "steps_per_mode has no steps";
  if (!doc["tensors"].is_array()) return "tensors is not an array";
  for (const auto& t : doc["tensors"]) {
    ProfileTensor p;
    try {
      p.name = t.at("name").get<std::string>();
      std::string dtype = t.at("dtype").get<std::string>();
      auto dt = dtype_from_name(dtype);
      bool supported =
          dt && (*dt == DType::String || *dt == DType::Float32 || *dt == DType::Float64 || *dt == DType::Float16 ||
                 *dt == DType::BFloat16 || *dt == DType::Int32 || *dt == DType::Int64);
      if (!supported) return "tensor '" + p.name + "': dtype '" + dtype + "' is not supported";
      p.dtype = *dt;
      p.shape = t.at("shape").get<std::vector<int64_t>>();
      if (std::any_of(p.shape.begin(), p.shape.end(), [](int64_t d) { return d < 0; }))
        return "tensor '" + p.name + "': a negative dimension";
      p.values_saved = t.at("values_saved").get<int64_t>();
      for (const auto& m : t.at("modes")) {
        auto mode = mode_from_name(m.get<std::string>());
        if (!mode) return "tensor '" + p.name + "': unknown mode '" + m.get<std::string>() + "'";
        p.modes.push_back(*mode);
      }
      p.collections = t.at("collections").get<std::vector<std::string>>();
      p.zero_fraction = t.value("mean_zero_fraction", 0.0);
      p.median = t.value("mean_p50", 0.0);
      p.range = t.value("mean_range", 1.0);
      p.classes = t.value("classes", int64_t{0});
      if (p.classes < 0 || (p.classes > 0 && p.dtype == DType::String))
        return "tensor '" + p.name + "': classes is not a count of a numeric tensor's classes";
    } catch (const nlohmann::json::exception& e) {
      return "tensor '" + p.name + "': " + e.what();
    }
    out->tensors.push_back(std::move(p));
  }
  return "";
}

// The mode of each global step: the modes' steps interleaved evenly (each step goes to the mode
// furthest behind its share; ties to the first mode).
std::vector<TrialMode> interleave_modes(const Profile& p) {
  int64_t total = 0;
  for (const auto& [m, n] : p.steps_per_mode) total += n;
  std::vector<int64_t> given(p.steps_per_mode.size(), 0);
  std::vector<TrialMode> out;
  out.reserve(static_cast<size_t>(total));
  for (int64_t g = 0; g < total; ++g) {
    size_t best = 0;
    double behind = -1e300;
    for (size_t i = 0; i < p.steps_per_mode.size(); ++i) {
      if (given[i] == p.steps_per_mode[i].second) continue;
      double b =
          static_cast<double>(p.steps_per_mode[i].second) * static_cast<double>(g + 1) / static_cast<double>(total) -
          static_cast<double>(given[i]);
      if (b > behind) behind = b, best = i;
    }
    ++given[best];
    out.push_back(p.steps_per_mode[best].first);
  }
  return out;
}

std::vector<CollectionSpec> profile_collections(const Profile& p) {
  std::map<std::string, std::vector<std::string>> members;
  for (const auto& t : p.tensors)
    for (const auto& c : t.collections) members[c].push_back(t.name);
  std::vector<CollectionSpec> out;
  for (auto& [name, tensors] : members) {
    CollectionSpec c;
    c.name = name;
    c.tensor_names = std::move(tensors);
    std::sort(c.tensor_names.begin(), c.tensor_names.end());
    out.push_back(std::move(c));
  }
  return out;
}

}  // namespace

int synth_from_profile(const std::string& profile_path, const std::string& out, uint64_t seed, bool checksums) {
  Profile profile;
  {
    std::ifstream in(profile_path, std::ios::binary);
    if (!in) {
      std::cerr << "trialdb synth: cannot read the profile " << printable(profile_path) << "\n";
      return kExitError;
    }
    std::stringstream text;
    text << in.rdbuf();
    nlohmann::json doc = nlohmann::json::parse(text.str(), nullptr, /*allow_exceptions=*/false);
    std::string error = doc.is_discarded() ? "not JSON" : parse_profile(doc, &profile);
    if (!error.empty()) {
      std::cerr << "trialdb synth: profile " << printable(profile_path) << ": " << printable(error) << "\n";
      return kExitError;
    }
  }
  std::error_code ec;
  if (std::filesystem::exists(out, ec) && !std::filesystem::is_empty(out, ec)) {
    std::cerr << "trialdb synth: " << printable(out) << " exists and is not empty; choose a new folder\n";
    return kExitError;
  }

  const std::vector<TrialMode> modes = interleave_modes(profile);
  const int64_t steps = static_cast<int64_t>(modes.size());
  TrialWriterOptions opt;
  opt.real_data_crc = checksums;
  TrialWriter trial(out, opt);
  const std::string worker = "worker_0";
  trial.write_collections(worker, 1, profile_collections(profile));

  std::vector<int64_t> saved(profile.tensors.size(), 0);
  std::map<TrialMode, int64_t> mode_steps;
  std::vector<uint8_t> buf;
  std::vector<std::string> words;
  uint64_t values = 0, records = 0, event_bytes = 0;
  for (int64_t g = 0; g < steps; ++g) {
    const TrialMode mode = modes[static_cast<size_t>(g)];
    trial.set_wall_time(1.7e9 + static_cast<double>(g));
    auto step = trial.begin_step(g, worker, mode, mode_steps[mode]++);
    for (size_t i = 0; i < profile.tensors.size(); ++i) {
      const ProfileTensor& t = profile.tensors[i];
      const int64_t every = std::max<int64_t>(1, steps / std::max<int64_t>(1, t.values_saved));
      if (saved[i] >= t.values_saved || g % every != 0 ||
          std::find(t.modes.begin(), t.modes.end(), mode) == t.modes.end())
        continue;
      ++saved[i];
      Rng rng(mix(mix(seed, i), static_cast<uint64_t>(g)));
      const int64_t n = t.numel();
      if (t.dtype == DType::String) {
        words.resize(static_cast<size_t>(n));
        for (auto& w : words) w = "w" + std::to_string(rng.next() % 8);
        step->add_strings(t.name, words, t.shape);
      } else if (t.classes > 0) {
        fill_values(&buf, t.dtype, n, 1.0f,
                    [&] { return static_cast<float>(rng.next() % static_cast<uint64_t>(t.classes)); });
        step->add_tensor(t.name, t.dtype, t.shape, buf.data(), buf.size());
      } else if (n == 1) {
        const float v = static_cast<float>(t.median + std::abs(t.median) * 0.05 * rng.uniform_pm1());
        fill_values(&buf, t.dtype, 1, 1.0f, [&] { return v; });
        step->add_tensor(t.name, t.dtype, t.shape, buf.data(), buf.size());
      } else {
        const float zeros = static_cast<float>(t.zero_fraction), range = static_cast<float>(t.range);
        const bool rectified = zeros >= 0.25f && std::abs(t.median) <= 0.01 * t.range;
        const float low = rectified ? 0.0f : static_cast<float>(t.median - t.range / 2);
        fill_values(&buf, t.dtype, n, 1.0f, [&] {
          if (zeros > 0 && rng.uniform01() < zeros) return 0.0f;
          const float u = rng.uniform01();
          return low + (rectified ? 1.0f - u : u) * range;  // rectified: (0, range]
        });
        step->add_tensor(t.name, t.dtype, t.shape, buf.data(), buf.size());
      }
      values += static_cast<uint64_t>(n);
      ++records;
    }
    step->close();
    event_bytes += step->event_bytes();
  }
  trial.write_end_marker();
  std::cout << "synth: wrote " << out << ": steps=" << steps;
  for (TrialMode m : kModes)
    if (mode_steps.count(m)) {
      std::string name = trial_mode_name(m);
      std::transform(name.begin(), name.end(), name.begin(), [](unsigned char c) { return std::tolower(c); });
      std::cout << " " << name << "_steps=" << mode_steps[m];
    }
  std::cout << " workers=1 tensors=" << profile.tensors.size() << " records=" << records << " values=" << values
            << " event_bytes=" << event_bytes << "\n";
  return kExitOk;
}

}  // namespace trialdb::cli
