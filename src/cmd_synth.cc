// trialdb synth: writes a synthetic trial that looks like a PyTorch hook's output, for tests and
// benchmarks of any size.
//
// Tensors: K tensors of E elements, cycling through five kinds per layer j:
//   Net_fc<j>.weight, Net_fc<j>.bias, relu<j>_output_0, gradient/Net_fc<j>.weight,
//   gradient/Net_fc<j>.bias
// plus the scalar CrossEntropyLoss_output_0, in the collections weights, biases, default,
// gradients, losses and all (as the hook exports them). Weights are 2-d when E factors.
// Values are deterministic for a seed: weights ~ U(-0.1, 0.1), biases ~ U(-0.01, 0.01), relu
// outputs max(0, U(-1, 1)), and gradients ~ U(-g, g) with g shrinking over the steps (a vanishing
// gradient), the loss decaying from 2.3. Every --eval-every'th global step is an EVAL step
// (no gradients), the rest TRAIN. Files are written straight from one reused buffer.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "ingest/writer/trial_writer.h"
#include "kernels/reductions.h"
#include "src/commands.h"
#include "src/output.h"
#include "src/synth_profile.h"
#include "src/synth_values.h"

namespace trialdb::cli {

namespace {

struct SynthArgs {
  std::string out;
  int64_t steps = 10;
  int64_t tensors = 8;
  int64_t elements = 1000;
  int workers = 1;
  std::string dtype = "float32";
  uint64_t seed = 1;
  int64_t eval_every = 10;
  bool checksums = false;
  bool reductions_only = false;
  std::string profile;
};

enum Kind { kWeight = 0, kBias, kActivation, kGradWeight, kGradBias, kKinds };

// Fills buf with n values v(i) = scale * U(-1,1) (+ relu) converted to dtype (integers x1000).
void fill(std::vector<uint8_t>* buf, DType dtype, int64_t n, Rng rng, float scale, bool relu) {
  fill_values(buf, dtype, n, 1000.0f, [&] {
    float v = rng.uniform_pm1();
    if (relu && v < 0) v = 0;
    return v * scale;
  });
}

struct TensorSpec {
  std::string name;
  Kind kind;
  std::vector<int64_t> shape;
};

std::vector<int64_t> shape_for(Kind kind, int64_t e) {
  if (e == 1) return {};  // scalars
  if (kind == kWeight || kind == kGradWeight) {
    int64_t r = static_cast<int64_t>(std::sqrt(static_cast<double>(e)));
    while (r > 1 && e % r != 0) --r;
    if (r > 1) return {r, e / r};
  }
  return {e};
}

std::vector<CollectionSpec> synth_collections(const std::vector<TensorSpec>& specs, const std::string& loss,
                                              bool reductions_only) {
  auto make = [&](std::string name, std::vector<std::string> regex, auto pred) {
    CollectionSpec c;
    c.name = std::move(name);
    c.include_regex = std::move(regex);
    for (const auto& t : specs)
      if (pred(t)) c.tensor_names.push_back(t.name);
    std::sort(c.tensor_names.begin(), c.tensor_names.end());
    if (reductions_only) {
      c.save_raw_tensor = false;
      c.save_shape = true;
      c.reductions =
          "min,max,mean,prod,std,variance,sum,l1_norm,l2_norm,abs_min,abs_max,abs_mean,abs_prod,"
          "abs_std,abs_variance,abs_sum,abs_l1_norm,abs_l2_norm";
    }
    return c;
  };
  std::vector<CollectionSpec> out;
  out.push_back(make("weights", {"^(?!gradient).*weight"}, [](const TensorSpec& t) { return t.kind == kWeight; }));
  out.push_back(make("biases", {"^(?!gradient).*bias"}, [](const TensorSpec& t) { return t.kind == kBias; }));
  out.push_back(make("gradients", {"^gradient"},
                     [](const TensorSpec& t) { return t.kind == kGradWeight || t.kind == kGradBias; }));
  out.push_back(make("default", {".*relu.*_output"}, [](const TensorSpec& t) { return t.kind == kActivation; }));
  CollectionSpec losses = make("losses", {"[Ll]oss_(?!input).*output"}, [](const TensorSpec&) { return false; });
  losses.tensor_names = {loss};
  losses.save_histogram = false;
  out.push_back(losses);
  out.push_back(make("all", {".*"}, [](const TensorSpec&) { return false; }));
  return out;
}

const char* const kReductionNames[kRedCount] = {"min", "max", "mean", "prod", "std", "variance", "sum", "l1", "l2"};

int run_synth(const SynthArgs& a) {
  auto dtype = dtype_from_name(a.dtype);
  bool supported = dtype && (*dtype == DType::Float32 || *dtype == DType::Float64 || *dtype == DType::Float16 ||
                             *dtype == DType::BFloat16 || *dtype == DType::Int32 || *dtype == DType::Int64);
  if (!supported) {
    std::cerr << "trialdb synth: --dtype " << printable(a.dtype)
              << " is not supported (use float32, float64, float16, bfloat16, int32 or int64)\n";
    return kExitUsage;
  }
  if (a.steps < 1 || a.tensors < 0 || a.elements < 1 || a.workers < 1 || a.eval_every < 0) {
    std::cerr << "trialdb synth: --steps, --elements and --workers must be >= 1, --tensors and "
                 "--eval-every >= 0\n";
    return kExitUsage;
  }
  std::error_code ec;
  if (std::filesystem::exists(a.out, ec) && !std::filesystem::is_empty(a.out, ec)) {
    std::cerr << "trialdb synth: " << printable(a.out) << " exists and is not empty; choose a new folder\n";
    return kExitError;
  }

  std::vector<TensorSpec> specs;
  specs.reserve(a.tensors);
  static const char* const fmt[kKinds] = {"Net_fc%lld.weight", "Net_fc%lld.bias", "relu%lld_output_0",
                                          "gradient/Net_fc%lld.weight", "gradient/Net_fc%lld.bias"};
  auto add = [&](Kind kind, int64_t layer) {
    char name[64];
    std::snprintf(name, sizeof name, fmt[kind], static_cast<long long>(layer));
    specs.push_back({name, kind, shape_for(kind, a.elements)});
  };
  for (int64_t i = 0; i < a.tensors; ++i) add(static_cast<Kind>(i % kKinds), i / kKinds);
  // Every weight and bias has its gradient, also when --tensors cuts a layer short.
  const int64_t last_layer = (a.tensors - 1) / kKinds, cut = a.tensors % kKinds;
  if (a.tensors > 0 && cut != 0)
    for (int k = std::max<int>(static_cast<int>(cut), kGradWeight); k < kKinds; ++k)
      if (k - (kGradWeight - kWeight) < cut) add(static_cast<Kind>(k), last_layer);
  const std::string loss = "CrossEntropyLoss_output_0";

  TrialWriterOptions opt;
  opt.real_data_crc = a.checksums;
  TrialWriter trial(a.out, opt);
  std::vector<std::string> workers;
  for (int w = 0; w < a.workers; ++w) workers.push_back("worker_" + std::to_string(w));
  auto collections = synth_collections(specs, loss, a.reductions_only);
  for (const auto& w : workers) trial.write_collections(w, a.workers, collections);

  std::vector<uint8_t> buf;
  uint64_t values = 0, records = 0, event_bytes = 0;
  int64_t train_steps = 0, eval_steps = 0;
  const double decay_steps = std::max<double>(1.0, a.steps / 3.0);
  for (int64_t g = 0; g < a.steps; ++g) {
    bool eval = a.eval_every > 0 && g % a.eval_every == a.eval_every - 1;
    TrialMode mode = eval ? TrialMode::kEval : TrialMode::kTrain;
    int64_t mode_step = eval ? eval_steps++ : train_steps++;
    trial.set_wall_time(1.7e9 + static_cast<double>(g));
    float grad_scale = 0.01f * static_cast<float>(std::exp(-g / decay_steps));
    for (int w = 0; w < a.workers; ++w) {
      auto step = trial.begin_step(g, workers[w], mode, mode_step);
      auto emit = [&](const std::string& name, const std::vector<int64_t>& shape, DType dt) {
        if (!a.reductions_only) {
          step->add_tensor(name, dt, shape, buf.data(), buf.size());
          values += buf.size() / dtype_size(dt);
          ++records;
          return;
        }
        TensorView v;
        v.dtype = dt;
        v.ndim = static_cast<int>(shape.size());
        for (int d = 0; d < v.ndim; ++d) v.dims[d] = shape[d];
        v.numel = static_cast<int64_t>(buf.size() / dtype_size(dt));
        v.data = buf.data();
        v.data_bytes = buf.size();
        Reductions r;
        if (!compute_reductions(v, &r)) return;
        for (int abs = 0; abs < 2; ++abs)
          for (int k = 0; k < kRedCount; ++k) {
            step->add_reduction(name, kReductionNames[k], abs, r.v[k + abs * kRedCount]);
            ++values;
            ++records;
          }
        step->add_shape(name, shape);
      };
      // Order as the PyTorch hook writes a step: parameters and activations, loss, gradients.
      for (int pass = 0; pass < 2; ++pass) {
        for (size_t i = 0; i < specs.size(); ++i) {
          const TensorSpec& t = specs[i];
          bool grad = t.kind == kGradWeight || t.kind == kGradBias;
          if (grad != (pass == 1) || (grad && eval)) continue;
          float scale = t.kind == kWeight ? 0.1f : t.kind == kBias ? 0.01f : t.kind == kActivation ? 1.0f : grad_scale;
          Rng rng(mix(mix(a.seed, i), mix(static_cast<uint64_t>(g), static_cast<uint64_t>(w))));
          fill(&buf, *dtype, a.elements, rng, scale, t.kind == kActivation);
          emit(t.name, t.shape, *dtype);
        }
        if (pass == 0) {
          Rng rng(mix(mix(a.seed, 0xF00Dull), mix(static_cast<uint64_t>(g), static_cast<uint64_t>(w))));
          float l = static_cast<float>(2.3 * std::exp(-g / decay_steps)) + 0.05f * rng.uniform_pm1();
          buf.resize(4);
          std::memcpy(buf.data(), &l, 4);
          emit(loss, {}, DType::Float32);
        }
      }
      step->close();
      event_bytes += step->event_bytes();
    }
  }
  trial.write_end_marker();
  std::cout << "synth: wrote " << a.out << ": steps=" << a.steps << " train_steps=" << train_steps
            << " eval_steps=" << eval_steps << " workers=" << a.workers << " tensors=" << specs.size() + 1
            << " records=" << records << " values=" << values << " event_bytes=" << event_bytes << "\n";
  return kExitOk;
}

}  // namespace

void add_synth(CLI::App& app) {
  auto args = std::make_shared<SynthArgs>();
  CLI::App* cmd = app.add_subcommand(
      "synth",
      "Write a synthetic smdebug trial (weights, biases, activations, gradients, a loss; TRAIN and EVAL "
      "steps; collections; end marker), deterministic for a seed");
  cmd->add_option("OUT", args->out, "New trial folder to write")->required();
  CLI::Option* steps = cmd->add_option("--steps", args->steps, "Global steps")->capture_default_str();
  CLI::Option* tensors = cmd->add_option("--tensors", args->tensors,
                                         "Tensors of --elements values each (plus one scalar loss; every weight and "
                                         "bias gets its gradient, which may add one or two)")
                             ->capture_default_str();
  CLI::Option* elements =
      cmd->add_option("--elements", args->elements, "Elements per tensor (1 = scalars)")->capture_default_str();
  CLI::Option* workers =
      cmd->add_option("--workers", args->workers, "Workers, each writing every step")->capture_default_str();
  CLI::Option* dtype = cmd->add_option("--dtype", args->dtype, "float32, float64, float16, bfloat16, int32 or int64")
                           ->capture_default_str();
  cmd->add_option("--seed", args->seed, "Seed; the same seed writes the same bytes")->capture_default_str();
  CLI::Option* eval_every =
      cmd->add_option("--eval-every", args->eval_every, "Every Nth global step is EVAL (0 = TRAIN only)")
          ->capture_default_str();
  cmd->add_flag("--checksums", args->checksums, "Footers are real data CRCs (smdebug write_checksum)");
  CLI::Option* reductions_only =
      cmd->add_flag("--reductions-only", args->reductions_only,
                    "Save the 18 reductions and the shape of each tensor instead of its values");
  cmd->add_option("--profile", args->profile,
                  "A shape profile (bench/profiles/*.json): write a trial of its tensors, dtypes, shapes, modes, "
                  "collections and value character instead")
      ->excludes(steps, tensors, elements, workers, dtype, eval_every, reductions_only);
  cmd->footer(
      "Examples:\n"
      "  trialdb synth /tmp/t --steps 100 --tensors 20 --elements 4096\n"
      "  trialdb synth /tmp/cnn --profile bench/profiles/cnn_1000_steps.json");
  cmd->callback([args] {
    exit_code() = args->profile.empty() ? run_synth(*args)
                                        : synth_from_profile(args->profile, args->out, args->seed, args->checksums);
  });
}

}  // namespace trialdb::cli
