#include "src/plot/ticks.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>

namespace trialdb::plot {

namespace {

// "1e-05" -> "1e-5", "2.5e+06" -> "2.5e6": shorter and what people write.
std::string tidy_exponent(std::string s) {
  size_t e = s.find('e');
  if (e == std::string::npos) return s;
  std::string mant = s.substr(0, e), exp = s.substr(e + 1);
  bool neg = !exp.empty() && exp[0] == '-';
  if (!exp.empty() && (exp[0] == '-' || exp[0] == '+')) exp.erase(0, 1);
  while (exp.size() > 1 && exp[0] == '0') exp.erase(0, 1);
  return mant + "e" + (neg ? "-" : "") + exp;
}

std::string printf_g(double v, int precision) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*g", precision, v);
  return tidy_exponent(buf);
}

}  // namespace

std::vector<Tick> symlog_ticks(double lo, double hi, double linthresh, int max_ticks) {
  std::vector<double> magnitudes;  // linthresh * 10^k up to the larger end
  const double reach = std::max(std::abs(lo), std::abs(hi));
  for (double m = linthresh; m <= reach && magnitudes.size() < 400; m *= 10) magnitudes.push_back(m);
  std::vector<double> values;
  for (size_t i = magnitudes.size(); i-- > 0;) values.push_back(-magnitudes[i]);
  values.push_back(0);
  values.insert(values.end(), magnitudes.begin(), magnitudes.end());
  std::vector<double> inside;
  for (double v : values)
    if (v >= lo && v <= hi) inside.push_back(v);
  const size_t every = std::max<size_t>(1, (inside.size() + max_ticks - 1) / std::max(max_ticks, 1));
  std::vector<Tick> out;
  const auto zero = std::find(inside.begin(), inside.end(), 0.0);
  const size_t anchor = zero == inside.end() ? 0 : static_cast<size_t>(zero - inside.begin());
  for (size_t i = 0; i < inside.size(); ++i)
    if ((i > anchor ? i - anchor : anchor - i) % every == 0) out.push_back({inside[i], format_number(inside[i])});
  return out;
}

std::string format_number(double v, int significant) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  if (v == 0) return "0";
  return printf_g(v, significant);
}

std::vector<Tick> linear_ticks(double lo, double hi, int max_ticks, bool integer) {
  std::vector<Tick> out;
  if (!(hi > lo) || !std::isfinite(hi - lo)) return out;
  max_ticks = std::max(max_ticks, 2);
  double raw = (hi - lo) / max_ticks;
  double mag = std::pow(10.0, std::floor(std::log10(raw)));
  double frac = raw / mag;
  double step = (frac <= 1 ? 1 : frac <= 2 ? 2 : frac <= 5 ? 5 : 10) * mag;
  if (integer) step = std::max(step, 1.0);
  // A subnormal range has no power of ten to step by (it underflows to 0): no ticks.
  if (!(step > 0) || !std::isfinite(step)) return out;
  double first = std::ceil(lo / step - 1e-9) * step;
  // Digits needed so that neighbouring labels differ: down to the step's own leading digit.
  double biggest = std::max(std::fabs(lo), std::fabs(hi));
  int digits = static_cast<int>(std::floor(std::log10(biggest)) - std::floor(std::log10(step))) + 1;
  // %g switches to an exponent when the exponent reaches the precision: keep 20 as "20", not
  // "2e1", up to a million.
  if (biggest >= 1 && biggest < 1e6) digits = std::max(digits, static_cast<int>(std::floor(std::log10(biggest))) + 1);
  digits = std::clamp(digits, 1, 15);
  for (int i = 0; i < 1000; i++) {
    double v = first + i * step;
    if (!std::isfinite(v) || v > hi + step * 1e-9) break;  // near the largest double v overflows
    if (std::fabs(v) < step * 1e-9) v = 0;                 // -0 and rounding noise at zero
    out.push_back({v, format_number(v, digits)});
  }
  return out;
}

std::vector<Tick> log_ticks(double lo, double hi, int max_ticks) {
  std::vector<Tick> out;
  if (!(lo > 0) || !(hi > lo) || !std::isfinite(hi)) return out;
  max_ticks = std::max(max_ticks, 2);
  int e0 = static_cast<int>(std::floor(std::log10(lo) + 1e-9));
  int e1 = static_cast<int>(std::ceil(std::log10(hi) - 1e-9));
  int decades = std::max(e1 - e0, 1);
  if (decades <= 2) {
    // A short range: 1, 2, 5 in every decade so there are enough labelled ticks.
    for (int e = e0; e <= e1; e++)
      for (double m : {1.0, 2.0, 5.0}) {
        double v = m * std::pow(10.0, e);
        if (v >= lo * (1 - 1e-9) && v <= hi * (1 + 1e-9)) out.push_back({v, format_number(v, 3)});
      }
    if (out.size() >= 2) return out;
    out.clear();
  }
  int every = std::max(1, (decades + max_ticks - 1) / max_ticks);
  for (int e = (e0 / every) * every; e <= e1; e += every) {
    double v = std::pow(10.0, e);
    if (v >= lo * (1 - 1e-9) && v <= hi * (1 + 1e-9)) out.push_back({v, format_number(v, 3)});
  }
  return out;
}

void pad_range(double* lo, double* hi, double frac, bool log) {
  if (log) {
    double a = std::log10(*lo), b = std::log10(*hi);
    if (b - a < 1e-12) {
      a -= 0.5;
      b += 0.5;
    }
    double pad = (b - a) * frac;
    *lo = std::pow(10.0, a - pad);
    *hi = std::pow(10.0, b + pad);
    return;
  }
  if (*hi - *lo <= std::fabs(*hi) * 1e-12 || *hi == *lo) {
    // A tenth of |lo| on each side; at least the smallest normal double (a tenth of a subnormal
    // rounds to nothing), and never past the largest one.
    constexpr double kMax = std::numeric_limits<double>::max();
    double half = *lo == 0 ? 1.0 : std::max(std::fabs(*lo) * 0.1, std::numeric_limits<double>::min());
    *lo = std::max(*lo - half, -kMax);
    *hi = std::min(*hi + half, kMax);
    return;
  }
  double pad = (*hi - *lo) * frac;
  *lo -= pad;
  *hi += pad;
}

}  // namespace trialdb::plot
