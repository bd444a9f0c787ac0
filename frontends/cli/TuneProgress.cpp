#include "frontends/cli/TuneProgress.h"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <string>

namespace tessera::cli {

namespace {

std::string duration(double s) {
  char text[32];
  if (s < 60)
    std::snprintf(text, sizeof text, "%.0fs", s);
  else
    std::snprintf(text, sizeof text, "%.0fm%02.0fs", std::floor(s / 60), std::fmod(s, 60));
  return text;
}

}  // namespace

TuneProgressBar::TuneProgressBar(int trials_per_kernel, bool plain_lines)
    : trials_(std::max(1, trials_per_kernel)), tty_(isatty(STDERR_FILENO)), plain_(plain_lines),
      start_(std::chrono::steady_clock::now()) {}

void TuneProgressBar::operator()(const TuneProgress &p) {
  double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  int done = p.trials_so_far;
  if (!tty_) {
    if (plain_ && p.index != last_)
      std::cerr << "tuning kernel " << p.index << " of " << p.count << ": " << p.kernel << "\n";
    last_ = p.index;
    return;
  }
  double fraction = (p.index - 1 + std::min(1.0, double(done) / trials_)) / std::max(1, p.count);
  double eta = fraction > 0 ? elapsed / fraction - elapsed : 0;
  int width = 24, filled = std::clamp(static_cast<int>(fraction * width), 0, width);
  char best[32];
  std::snprintf(best, sizeof best, "%.3f ms", p.best_seconds * 1e3);
  std::cerr << "\r[" << std::string(filled, '#') << std::string(width - filled, '.') << "] kernel "
            << p.index << "/" << p.count << " " << p.kernel.substr(0, 20) << "  trial " << done
            << "/" << trials_ << "  best " << best << "  " << duration(elapsed) << " elapsed, ETA "
            << duration(eta) << "\033[K" << std::flush;
  last_ = p.index;
}

void TuneProgressBar::finish() {
  if (tty_ && last_ > 0) std::cerr << "\n";
}

}  // namespace tessera::cli
